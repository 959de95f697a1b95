#include "launcher/cli/option_table.h"

#include <array>
#include <cctype>

namespace cpplaunch {
namespace {

using K = ValueKind;
using O = OptionId;

// Rows in torchrun's add_argument order (help first, as argparse adds it), because usage and
// help list options in that order. `name` is the spelling torchrun declares first: argparse
// derives the dest, and so the PET_ variable (EnvNameFor), from it.
constexpr std::array kTable = {
    OptionSpec{O::kHelp, "--help", "", "-h", K::kHelp, "", false, "",
               "show this help message and exit"},
    // cpplaunch's own, beside help as argparse's version action would be.
    OptionSpec{O::kVersion, "--version", "", "", K::kVersion, "", false, "",
               "show the version and exit"},
    OptionSpec{O::kNnodes, "--nnodes", "", "", K::kString, "", true, "1:1",
               "number of nodes N, or a range MIN:MAX"},
    OptionSpec{O::kNprocPerNode, "--nproc-per-node", "--nproc_per_node", "", K::kString, "", true,
               "1", "workers per node: an integer, cpu, gpu or auto", "auto,cpu,gpu"},
    OptionSpec{O::kRdzvBackend, "--rdzv-backend", "--rdzv_backend", "", K::kString, "", true,
               "static", "rendezvous backend (static, c10d or etcd-v3)",
               "static,c10d,etcd,etcd-v2,etcd-v3"},
    OptionSpec{O::kRdzvEndpoint, "--rdzv-endpoint", "--rdzv_endpoint", "", K::kString, "", true, "",
               "host[:port] (etcd: host[:port],...)"},
    OptionSpec{O::kRdzvId, "--rdzv-id", "--rdzv_id", "", K::kString, "", true, "none",
               "user-defined job id (TORCHELASTIC_RUN_ID)"},
    OptionSpec{O::kRdzvConf, "--rdzv-conf", "--rdzv_conf", "", K::kString, "", true, "",
               "extra rendezvous settings, k1=v1,k2=v2"},
    OptionSpec{O::kStandalone, "--standalone", "", "", K::kFlag, "", true, "off",
               "one node: a free port and a fresh run id"},
    OptionSpec{O::kMaxRestarts, "--max-restarts", "--max_restarts", "", K::kInt, "", true, "0",
               "restarts after a failure before giving up"},
    OptionSpec{O::kMonitorInterval, "--monitor-interval", "--monitor_interval", "", K::kFloat, "",
               true, "0.1", "accepted; nothing polls (exits are events)"},
    OptionSpec{O::kStartMethod, "--start-method", "--start_method", "", K::kString,
               "spawn,fork,forkserver", true, "spawn", "accepted; no effect on script launches"},
    OptionSpec{O::kEventLogHandler, "--event-log-handler", "--event_log_handler", "", K::kString,
               "", true, "null", "null, console (JSON lines), dynamic_rendezvous",
               "null,console,dynamic_rendezvous"},
    OptionSpec{O::kRole, "--role", "", "", K::kString, "", true, "default",
               "role of the workers (ROLE_NAME, prefix)"},
    OptionSpec{O::kModule, "--module", "", "-m", K::kFlag, "", true, "off",
               "run the script as a module, like python -m"},
    OptionSpec{O::kNoPython, "--no-python", "--no_python", "", K::kFlag, "", true, "off",
               "run the script itself, not through python"},
    OptionSpec{O::kRunPath, "--run-path", "--run_path", "", K::kFlag, "", true, "off",
               "run the script with runpy.run_path"},
    OptionSpec{O::kLogDir, "--log-dir", "--log_dir", "", K::kString, "", true,
               "a new temporary directory", "base directory for log files (/dev/null: none)"},
    OptionSpec{O::kRedirects, "--redirects", "", "-r", K::kString, "", true, "0",
               "streams to files only: 0-3 (1 out 2 err), lr:v"},
    OptionSpec{O::kTee, "--tee", "", "-t", K::kString, "", true, "0",
               "streams to files and console (format as -r)"},
    OptionSpec{O::kLocalRanksFilter, "--local-ranks-filter", "--local_ranks_filter", "", K::kString,
               "", true, "", "local ranks shown on the console: 0,1,..."},
    OptionSpec{O::kDuplicateStdoutFilters, "--duplicate-stdout-filters",
               "--duplicate_stdout_filters", "", K::kString, "", true, "none",
               "matching tee'd lines to filtered_stdout.log"},
    OptionSpec{O::kDuplicateStderrFilters, "--duplicate-stderr-filters",
               "--duplicate_stderr_filters", "", K::kString, "", true, "none",
               "matching tee'd lines to filtered_stderr.log"},
    OptionSpec{O::kNodeRank, "--node-rank", "--node_rank", "", K::kInt, "", true, "0",
               "rank of this node (static rendezvous)"},
    OptionSpec{O::kMasterAddr, "--master-addr", "--master_addr", "", K::kString, "", true,
               "127.0.0.1", "address of the rank-0 node (static rendezvous)"},
    OptionSpec{O::kMasterPort, "--master-port", "--master_port", "", K::kInt, "", true, "29500",
               "store port on the rank-0 node; 0 = free port"},
    OptionSpec{O::kLocalAddr, "--local-addr", "--local_addr", "", K::kString, "", true,
               "the address that reaches the store", "address this node advertises"},
    // torchrun declares the next two without its env action, so no PET_ variable sets them.
    OptionSpec{O::kLogsSpecs, "--logs-specs", "--logs_specs", "", K::kString, "", false,
               "default layout", "Python plugin; only default (others refused)"},
    OptionSpec{O::kNumaBinding, "--numa-binding", "--numa_binding", "", K::kString,
               "node,socket,exclusive,core-complex", false, "none",
               "bind each worker to CPUs near GPU <local rank>"},
    OptionSpec{O::kSignalsToHandle, "--signals-to-handle", "--signals_to_handle", "", K::kString,
               "", true, "SIGTERM,SIGINT,SIGHUP,SIGQUIT",
               "signals forwarded to the workers, A,B,..."},
    // cpplaunch's own, beside the list it complements.
    OptionSpec{O::kForwardSignals, "--forward-signals", "--forward_signals", "", K::kString, "",
               true, "none", "signals passed to the workers; the job runs on"},
    OptionSpec{O::kShutdownTimeout, "--shutdown-timeout", "--shutdown_timeout", "", K::kInt, "",
               true, "$TORCH_ELASTIC_SHUTDOWN_TIMEOUT, 30",
               "seconds between the stop signal and SIGKILL"},
    // cpplaunch's own: torchrun hard-codes its 300 s (an open upstream request to change it).
    OptionSpec{O::kExitBarrierTimeout, "--exit-barrier-timeout", "--exit_barrier_timeout", "",
               K::kFloat, "", true, "300; $TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT sets it",
               "seconds hosts wait for each other at the end"},
    OptionSpec{O::kVirtualLocalRank, "--virtual-local-rank", "--virtual_local_rank", "", K::kFlag,
               "", true, "off", "LOCAL_RANK=0; CUDA_VISIBLE_DEVICES = its GPU"},
    // cpplaunch's own: where --nnodes, --node-rank and the store come from (engine_options.h).
    OptionSpec{O::kEngine, "--engine", "", "", K::kString, "auto,none,slurm,mpi,k8s", true, "auto",
               "nodes, node rank, store from Slurm/MPI/k8s"},
    // cpplaunch's own: K of the engine's hosts wait as hot spares (engine_options.h).
    OptionSpec{O::kSpares, "--spares", "", "", K::kInt, "", true, "0",
               "keep K of the engine's hosts as spares (c10d)"},
    // cpplaunch's own: rank0 lets PyTorch builds without libuv (Debian's 2.6) run DDP.
    OptionSpec{O::kWorkerStore, "--worker-store", "--worker_store", "", K::kString, "agent,rank0",
               true, "agent", "workers' store: the agent's, or rank 0's"},
    // cpplaunch's own: behave as `python -m torch.distributed.launch` (1.x), whose extra
    // option --use-env/--use_env follows (declared there without the env action).
    OptionSpec{O::kLegacyLaunch, "--legacy-launch", "--legacy_launch", "", K::kFlag, "", true,
               "off", "as torch.distributed.launch: --local_rank=N"},
    OptionSpec{O::kUseEnv, "--use-env", "--use_env", "", K::kFlag, "", false, "off",
               "with --legacy-launch: no --local_rank"},
    // cpplaunch's own: diagnosis of a job that stopped making progress (hang_watch.h).
    OptionSpec{O::kHangTimeout, "--hang-timeout", "--hang_timeout", "", K::kFloat, "", true, "off",
               "seconds without progress: stacks, then stop"},
    // cpplaunch's own: what the process returns when a worker fails (job_exit_status.h).
    OptionSpec{O::kExitCode, "--exit-code", "--exit_code", "", K::kString, "worker,torchrun", true,
               "torchrun", "on failure: 1 (torchrun) or the worker's code"},
    // cpplaunch's own: the agent's HTTP endpoint (health, status, metrics; launcher/status/).
    OptionSpec{O::kStatusPort, "--status-port", "--status_port", "", K::kInt, "", true, "off",
               "serve /healthz /readyz /status /metrics"},
    OptionSpec{O::kStatusAddr, "--status-addr", "--status_addr", "", K::kString, "", true,
               "127.0.0.1", "the address --status-port listens on"},
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

bool TakesValue(const OptionSpec& spec) {
  return spec.kind == ValueKind::kString || spec.kind == ValueKind::kInt ||
         spec.kind == ValueKind::kFloat;
}

std::string DisplayName(const OptionSpec& spec) {
  std::string name;
  if (!spec.short_name.empty()) name = std::string(spec.short_name) + "/";
  name += spec.name;
  if (!spec.alias.empty()) name += "/" + std::string(spec.alias);
  return name;
}

}  // namespace cpplaunch
