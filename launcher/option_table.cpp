#include "launcher/option_table.h"

#include <array>
#include <cctype>

namespace cpplaunch {
namespace {

using K = ValueKind;
using O = OptionId;

constexpr std::array kTable = {
    OptionSpec{O::kHelp, "--help", "", "-h", K::kHelp, "", false, "",
               "show this help message and exit"},
    OptionSpec{O::kNnodes, "--nnodes", "", "", K::kString, "", true, "1:1",
               "number of nodes, or the range of nodes as MIN:MAX"},
    OptionSpec{O::kNprocPerNode, "--nproc-per-node", "--nproc_per_node", "", K::kString, "",
               true, "1", "workers per node: an integer, cpu, gpu or auto"},
    OptionSpec{O::kRdzvBackend, "--rdzv-backend", "--rdzv_backend", "", K::kString, "", true,
               "static", "rendezvous backend (static or c10d)"},
    OptionSpec{O::kRdzvEndpoint, "--rdzv-endpoint", "--rdzv_endpoint", "", K::kString, "",
               true, "", "rendezvous endpoint, host[:port]"},
    OptionSpec{O::kRdzvId, "--rdzv-id", "--rdzv_id", "", K::kString, "", true, "none",
               "user-defined job id (TORCHELASTIC_RUN_ID)"},
    OptionSpec{O::kRdzvConf, "--rdzv-conf", "--rdzv_conf", "", K::kString, "", true, "",
               "extra rendezvous settings, key1=value1,key2=value2"},
    OptionSpec{O::kStandalone, "--standalone", "", "", K::kFlag, "", true, "off",
               "single node: c10d rendezvous on a free local port with a fresh run id"},
    OptionSpec{O::kMaxRestarts, "--max-restarts", "--max_restarts", "", K::kInt, "", true, "0",
               "restarts of the worker group after a failure before giving up"},
    OptionSpec{O::kMonitorInterval, "--monitor-interval", "--monitor_interval", "", K::kFloat,
               "", true, "0.1", "seconds between checks of the workers' state"},
    OptionSpec{O::kStartMethod, "--start-method", "--start_method", "", K::kString,
               "spawn,fork,forkserver", true, "spawn",
               "multiprocessing start method (accepted; no effect on script launches)"},
    OptionSpec{O::kEventLogHandler, "--event-log-handler", "--event_log_handler", "",
               K::kString, "", true, "null", "name of a registered event logging handler"},
    OptionSpec{O::kRole, "--role", "", "", K::kString, "", true, "default",
               "user-defined role of the workers (ROLE_NAME, output prefix)"},
    OptionSpec{O::kModule, "--module", "", "-m", K::kFlag, "", true, "off",
               "run the script as a Python module, like 'python -m'"},
    OptionSpec{O::kNoPython, "--no-python", "--no_python", "", K::kFlag, "", true, "off",
               "execute the training script directly instead of through python"},
    OptionSpec{O::kRunPath, "--run-path", "--run_path", "", K::kFlag, "", true, "off",
               "run the script with runpy.run_path in the same interpreter"},
    OptionSpec{O::kLogDir, "--log-dir", "--log_dir", "", K::kString, "", true,
               "a new temporary directory", "base directory for log files (/dev/null: none)"},
    OptionSpec{O::kRedirects, "--redirects", "", "-r", K::kString, "", true, "0",
               "send worker streams to log files only: 0-3 (1 out, 2 err) or lr:v,..."},
    OptionSpec{O::kTee, "--tee", "", "-t", K::kString, "", true, "0",
               "copy worker streams to log files and the console (format as -r)"},
    OptionSpec{O::kLocalRanksFilter, "--local-ranks-filter", "--local_ranks_filter", "",
               K::kString, "", true, "",
               "local ranks whose output reaches the console, 0,1,... (default: all)"},
    OptionSpec{O::kDuplicateStdoutFilters, "--duplicate-stdout-filters",
               "--duplicate_stdout_filters", "", K::kString, "", true, "none",
               "also copy stdout lines containing any filter to a file (',,' = comma)"},
    OptionSpec{O::kDuplicateStderrFilters, "--duplicate-stderr-filters",
               "--duplicate_stderr_filters", "", K::kString, "", true, "none",
               "also copy stderr lines containing any filter to a file (',,' = comma)"},
    OptionSpec{O::kNodeRank, "--node-rank", "--node_rank", "", K::kInt, "", true, "0",
               "rank of this node (static rendezvous)"},
    OptionSpec{O::kMasterAddr, "--master-addr", "--master_addr", "", K::kString, "", true,
               "127.0.0.1", "address of the rank-0 node (static rendezvous)"},
    OptionSpec{O::kMasterPort, "--master-port", "--master_port", "", K::kInt, "", true,
               "29500", "port of the store on the rank-0 node; 0 = a free port"},
    OptionSpec{O::kLocalAddr, "--local-addr", "--local_addr", "", K::kString, "", true,
               "this host's FQDN", "address this node advertises"},
    OptionSpec{O::kLogsSpecs, "--logs-specs", "--logs_specs", "", K::kString, "", false,
               "default layout", "torchrun.logs_specs entry point (Python plugin)"},
    OptionSpec{O::kNumaBinding, "--numa-binding", "--numa_binding", "", K::kString,
               "node,socket,exclusive,core-complex", false, "none",
               "bind workers to CPUs near their GPU"},
    OptionSpec{O::kSignalsToHandle, "--signals-to-handle", "--signals_to_handle", "",
               K::kString, "", true, "SIGTERM,SIGINT,SIGHUP,SIGQUIT",
               "signals forwarded to the workers, comma-separated"},
    OptionSpec{O::kShutdownTimeout, "--shutdown-timeout", "--shutdown_timeout", "", K::kInt,
               "", true, "$TORCH_ELASTIC_SHUTDOWN_TIMEOUT or 30",
               "seconds between the stop signal and SIGKILL"},
    OptionSpec{O::kVirtualLocalRank, "--virtual-local-rank", "--virtual_local_rank", "",
               K::kFlag, "", true, "off",
               "LOCAL_RANK=0 in every worker; CUDA_VISIBLE_DEVICES names its one GPU"},
};

}  // namespace

std::span<const OptionSpec> OptionTable() { return kTable; }

const OptionSpec& SpecFor(OptionId id) {
  for (const OptionSpec& spec : kTable) {
    if (spec.id == id) return spec;
  }
  return kTable.front();  // unreachable: every id has a row
}

std::string EnvNameFor(const OptionSpec& spec) {
  std::string name = "PET_";
  for (char c : spec.name.substr(2)) {
    name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

std::string DisplayName(const OptionSpec& spec) {
  std::string name;
  if (!spec.short_name.empty()) name = std::string(spec.short_name) + "/";
  name += spec.name;
  if (!spec.alias.empty()) name += "/" + std::string(spec.alias);
  return name;
}

}  // namespace cpplaunch
