#include "launcher/cli/resolve_options.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cmath>

#include "base/text.h"
#include "launcher/cli/option_value.h"
#include "launcher/cli/parse_failure.h"
#include "launcher/cli/signal_list.h"
#include "launcher/placement/gpu_count.h"
#include "worker_env/env_names.h"

namespace cpplaunch {
namespace {

// Option text outside option_value.h's bounds: one line, exit 2.
void RefuseIf(const std::string& problem) {
  if (!problem.empty()) Refuse(problem);
}

const std::string* Find(const RawValues& raw, OptionId id) {
  auto it = raw.find(id);
  return it == raw.end() ? nullptr : &it->second.text;
}

std::string TextOr(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text ? *text : std::string(SpecFor(id).default_text);
}

bool FlagOf(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text && *text == "1";
}

int IntOf(const RawValues& raw, OptionId id) {
  return ToInt(ParsePythonInt(TextOr(raw, id))).value_or(0);  // checked by CheckType
}

std::optional<std::string> OptionalTextOf(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

void ResolveNnodes(const std::string& text, LaunchOptions& o) {
  const size_t colon = text.find(':');
  if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos) {
    ValueError("nnodes=" + text + " is not in \"MIN:MAX\" format");
  }
  const std::string min_text = text.substr(0, colon);
  const std::string max_text = colon == std::string::npos ? min_text : text.substr(colon + 1);
  auto min = ToInt(ParsePythonInt(min_text));
  auto max = ToInt(ParsePythonInt(max_text));
  if (!min || !max) ValueError("--nnodes " + text + ": expected N or MIN:MAX with integers");
  if (!(0 < *min && *min <= *max)) ValueError("--nnodes " + text + ": need 0 < MIN <= MAX");
  o.min_nodes = *min;
  o.max_nodes = *max;
}

// As torch.cuda.device_count(): CUDA_VISIBLE_DEVICES narrows what the hardware offers.
int VisibleGpus(const EnvMap& env, const HostProbe& host) {
  return VisibleGpuCount(Lookup(env, env_names::kCudaVisibleDevices), host.physical_gpus());
}

int ResolveNproc(const std::string& text, const EnvMap& env, const HostProbe& host) {
  if (auto number = ParsePythonInt(text)) {
    if (*number < 1 || *number > 1 << 20) {
      ValueError("--nproc-per-node " + text + ": need at least 1 worker per node");
    }
    return static_cast<int>(*number);
  }
  // torchrun's os.cpu_count(): every online CPU, not the affinity mask the agent runs under.
  if (text == "cpu") return host.online_cpus();
  if (text == "auto") {
    const int gpus = VisibleGpus(env, host);
    return gpus > 0 ? gpus : host.online_cpus();
  }
  if (text == "gpu") {
    const int gpus = VisibleGpus(env, host);
    if (gpus > 0) return gpus;
    auto cvd = Lookup(env, env_names::kCudaVisibleDevices);
    ValueError("gpu: no NVIDIA GPU is visible (" +
               (cvd ? "CUDA_VISIBLE_DEVICES=" + *cvd : "CUDA_VISIBLE_DEVICES is not set") + ")");
  }
  if (text == "xpu") ValueError("Xpu is not available.");
  // torchrun's "Unsupported nproc_per_node value" (exit 1) lists nothing; a mistyped value is a
  // usage error, and the accepted values are the way out.
  UsageError("argument --nproc-per-node/--nproc_per_node: invalid value: '" + text +
             "' (give an integer, or auto, cpu or gpu)");
}

std::chrono::nanoseconds ResolveMonitorInterval(const std::string& text) {
  const double seconds = ParsePythonFloat(text).value_or(0);
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) {
    ValueError("--monitor-interval " + text + ": need a positive number of seconds");
  }
  return std::chrono::nanoseconds(static_cast<long long>(std::ceil(seconds * 1e9)));
}

std::optional<std::set<int>> ResolveRanksFilter(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::set<int> ranks;
  for (std::string_view item : Split(text, ',')) {
    auto rank = ToInt(ParsePythonInt(item));
    if (!rank) {
      ValueError(
          "--local_ranks_filter must be a comma-separated list of integers e.g. "
          "--local_ranks_filter=0,1,2");
    }
    ranks.insert(*rank);
  }
  return ranks;
}

// torchrun's comma_separated_list: ",," is a literal comma. Done as torchrun does it: the
// pairs become a placeholder, the rest splits on ','. NUL serves as the placeholder because
// values come from argv and the environment, which cannot hold one.
std::vector<std::string> CommaSeparatedList(std::string_view text) {
  std::string marked(text);
  for (size_t at = 0; (at = marked.find(",,", at)) != std::string::npos;)
    marked.replace(at, 2, 1, '\0');
  std::vector<std::string> items;
  for (std::string_view piece : Split(marked, ',')) {
    std::string item(piece);
    std::replace(item.begin(), item.end(), '\0', ',');
    items.push_back(std::move(item));
  }
  return items;
}

std::vector<std::string> ResolveFilters(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text ? CommaSeparatedList(*text) : std::vector<std::string>{};
}

StdSpec ResolveStd(const RawValues& raw, OptionId id) {
  std::string error;
  auto spec = StdSpec::Parse(TextOr(raw, id), &error);
  if (!spec) {
    ValueError(std::string(id == OptionId::kRedirects ? "-r/--redirects" : "-t/--tee") + ": " +
               error);
  }
  return *spec;
}

// Newest torchrun: the option, else TORCH_ELASTIC_SHUTDOWN_TIMEOUT, else the 30 s that 1.13
// hard-codes.
std::chrono::seconds ResolveShutdownTimeout(const RawValues& raw, const EnvMap& env) {
  int seconds = 30;
  if (Find(raw, OptionId::kShutdownTimeout)) {
    seconds = IntOf(raw, OptionId::kShutdownTimeout);
  } else if (auto text = Lookup(env, env_names::kShutdownTimeout)) {
    auto value = ToInt(ParsePythonInt(*text));
    if (!value)
      ValueError(std::string(env_names::kShutdownTimeout) + "=" + *text + " is not an integer");
    seconds = *value;
  }
  if (seconds < 0) {
    ValueError("shutdown_timeout must be non-negative, got " + std::to_string(seconds));
  }
  return std::chrono::seconds(seconds);
}

// The option (or PET_EXIT_BARRIER_TIMEOUT), else TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT (named
// like the shutdown timeout's variable), else torchrun's fixed 300 s. Whole milliseconds, at
// least one.
std::chrono::milliseconds ResolveExitBarrierTimeout(const RawValues& raw, const EnvMap& env) {
  std::string source = "--exit-barrier-timeout";
  std::optional<std::string> text;
  if (const std::string* given = Find(raw, OptionId::kExitBarrierTimeout)) {
    text = *given;
  } else if (auto value = Lookup(env, env_names::kExitBarrierTimeout)) {
    text = *value;
    source = std::string(env_names::kExitBarrierTimeout);
  }
  if (!text) return std::chrono::seconds(300);
  const double seconds = ParsePythonFloat(*text).value_or(0);
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) {
    Refuse(source + " " + *text + ": need a positive number of seconds (default 300)");
  }
  return std::chrono::milliseconds(std::max(1LL, std::llround(seconds * 1e3)));
}

// The command line's value passed the choices check already; PET_WORKER_STORE did not.
WorkerStore ResolveWorkerStore(const std::string& text) {
  if (text == "agent") return WorkerStore::kAgent;
  if (text == "rank0") return WorkerStore::kRank0;
  ValueError("--worker-store " + text + ": need agent or rank0");
}

// The command line's value passed the choices check already; PET_EXIT_CODE did not.
ExitCodeMode ResolveExitCode(const std::string& text) {
  if (text == "torchrun") return ExitCodeMode::kTorchrun;
  if (text == "worker") return ExitCodeMode::kWorker;
  ValueError("--exit-code " + text + ": need worker or torchrun");
}

// Whole milliseconds, at least one; absent = off.
std::optional<std::chrono::milliseconds> ResolveHangTimeout(const RawValues& raw) {
  const std::string* text = Find(raw, OptionId::kHangTimeout);
  if (text == nullptr) return std::nullopt;
  const double seconds = ParsePythonFloat(*text).value_or(0);
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) {
    ValueError("--hang-timeout " + *text + ": need a positive number of seconds");
  }
  return std::chrono::milliseconds(std::max(1LL, std::llround(seconds * 1e3)));
}

// --status-port wins over TORCHELASTIC_HEALTH_CHECK_PORT, torchrun's variable (which torchrun
// reads and then serves nothing on).
void ResolveStatus(const RawValues& raw, const EnvMap& env, LaunchOptions& o) {
  std::string source = "--status-port";
  std::optional<std::string> text;
  if (const std::string* given = Find(raw, OptionId::kStatusPort)) {
    text = *given;
  } else if (auto it = env.find(std::string(env_names::kHealthCheckPort)); it != env.end()) {
    text = it->second;
    source = std::string(env_names::kHealthCheckPort);
  }
  o.status_addr = TextOr(raw, OptionId::kStatusAddr);
  if (!text) return;
  const auto port = ToInt(ParsePythonInt(*text));
  if (!port || *port < 0 || *port > 65535) {
    UsageError(source + " " + *text + ": need a TCP port, 0..65535 (0: a free port)");
  }
  unsigned char address[sizeof(in6_addr)];
  if (::inet_pton(AF_INET, o.status_addr.c_str(), address) != 1 &&
      ::inet_pton(AF_INET6, o.status_addr.c_str(), address) != 1) {
    UsageError("--status-addr " + o.status_addr +
               ": not a numeric address; give one such as 127.0.0.1, 0.0.0.0 or ::");
  }
  o.status_port = *port;
}

void CheckBackend(const LaunchOptions& o) {
  if (o.standalone) return;  // torchrun replaces the backend with c10d before looking it up
  for (std::string_view known : {"static", "c10d", "etcd", "etcd-v2", "etcd-v3"}) {
    if (o.rdzv_backend == known) return;
  }
  ValueError("Rendezvous handler for rdzv_backend '" + o.rdzv_backend +
             "' is not registered (known: static, c10d, etcd, etcd-v2, etcd-v3)");
}

// After CheckBackend: which keys are valid depends on the backend. Every error is a usage
// error (one line, exit 2), found before the agent creates anything.
void ResolveRdzvSettings(const RawValues& raw, const EnvMap& env, LaunchOptions& o) {
  std::string error;
  auto conf = RdzvConfig::Parse(TextOr(raw, OptionId::kRdzvConf), &error);
  if (!conf) Refuse(error);
  auto settings = ReadRdzvSettings(*conf, o.standalone ? "c10d" : o.rdzv_backend, env, &error);
  if (!settings) Refuse(error);
  o.rdzv = std::move(*settings);
}

void ResolveSizes(const RawValues& raw, const EnvMap& env, const HostProbe& host,
                  LaunchOptions& o) {
  ResolveNnodes(TextOr(raw, OptionId::kNnodes), o);
  o.max_restarts = IntOf(raw, OptionId::kMaxRestarts);
  if (o.max_restarts < 0) {
    ValueError("max_restarts must be non-negative, got " + std::to_string(o.max_restarts));
  }
  o.nproc_per_node_text = TextOr(raw, OptionId::kNprocPerNode);
  o.nproc_per_node = ResolveNproc(o.nproc_per_node_text, env, host);
}

void ResolveRendezvous(const RawValues& raw, LaunchOptions& o) {
  o.rdzv_backend = TextOr(raw, OptionId::kRdzvBackend);
  o.rdzv_endpoint = TextOr(raw, OptionId::kRdzvEndpoint);
  o.rdzv_id = TextOr(raw, OptionId::kRdzvId);
  o.standalone = FlagOf(raw, OptionId::kStandalone);
  // --standalone replaces the run id with its own.
  if (!o.standalone) RefuseIf(RunIdProblem("--rdzv-id", o.rdzv_id));
  o.node_rank = IntOf(raw, OptionId::kNodeRank);
  if (o.node_rank < 0)
    ValueError("--node-rank must be non-negative, got " + std::to_string(o.node_rank));
  o.master_addr = BareAddress(TextOr(raw, OptionId::kMasterAddr));
  // An empty address would bind the store to every interface (or name no host to reach): a
  // blank MASTER_ADDR in a job script is a mistake, not a wish.
  if (Strip(o.master_addr).empty()) {
    UsageError("--master-addr is empty; give the address of the node-rank-0 host (default " +
               std::string(SpecFor(OptionId::kMasterAddr).default_text) + ")");
  }
  RefuseIf(HostAddressProblem("--master-addr", o.master_addr,
                              "give one host name or address of the node-rank-0 host, such as "
                              "10.0.0.1"));
  o.master_port = IntOf(raw, OptionId::kMasterPort);
  if (o.master_port < 0 || o.master_port > 65535) {
    ValueError("--master-port " + std::to_string(o.master_port) +
               ": need 0..65535 (0 = a free port)");
  }
  o.local_addr = OptionalTextOf(raw, OptionId::kLocalAddr);
  if (o.local_addr) {
    o.local_addr = BareAddress(*o.local_addr);
    RefuseIf(HostAddressProblem("--local-addr", *o.local_addr,
                                "give one host name or address of this host, such as 10.0.0.2 "
                                "(the one the other hosts reach it at)"));
  }
}

void ResolveOutput(const RawValues& raw, LaunchOptions& o) {
  o.local_ranks_filter = ResolveRanksFilter(TextOr(raw, OptionId::kLocalRanksFilter));
  o.logs_specs = OptionalTextOf(raw, OptionId::kLogsSpecs);
  o.log_dir = OptionalTextOf(raw, OptionId::kLogDir);
  if (o.log_dir) RefuseIf(PathProblem("--log-dir", *o.log_dir));
  o.redirects = ResolveStd(raw, OptionId::kRedirects);
  o.tee = ResolveStd(raw, OptionId::kTee);
  o.duplicate_stdout_filters = ResolveFilters(raw, OptionId::kDuplicateStdoutFilters);
  o.duplicate_stderr_filters = ResolveFilters(raw, OptionId::kDuplicateStderrFilters);
}

// Usage errors (exit 2), unlike torchrun's lenient --signals-to-handle: the option is
// cpplaunch's own, and a signal both forwarded and handled would mean two things at once.
std::vector<int> ResolveForwardSignals(const RawValues& raw, const std::vector<int>& handled) {
  const std::string* text = Find(raw, OptionId::kForwardSignals);
  if (text == nullptr) return {};
  std::string error;
  std::optional<std::vector<int>> signals = ParseForwardSignals(*text, &error);
  if (!signals) UsageError(error);
  for (int signo : *signals) {
    if (std::find(handled.begin(), handled.end(), signo) == handled.end()) continue;
    UsageError(SignalModuleName(signo) +
               " is in both --forward-signals and --signals-to-handle (which tears the job "
               "down on it); leave it in one of them");
  }
  return *signals;
}

void ResolveWorkers(const RawValues& raw, const EnvMap& env, LaunchOptions& o,
                    std::vector<std::string>& warnings) {
  o.monitor_interval = ResolveMonitorInterval(TextOr(raw, OptionId::kMonitorInterval));
  o.start_method = TextOr(raw, OptionId::kStartMethod);
  o.event_log_handler = TextOr(raw, OptionId::kEventLogHandler);
  o.role = TextOr(raw, OptionId::kRole);
  RefuseIf(RoleProblem("--role", o.role));
  o.numa_binding = OptionalTextOf(raw, OptionId::kNumaBinding);
  o.signals_to_handle_text = TextOr(raw, OptionId::kSignalsToHandle);
  SignalList signals = ParseSignalList(o.signals_to_handle_text);
  o.signals_to_handle = std::move(signals.signals);
  warnings.insert(warnings.end(), signals.warnings.begin(), signals.warnings.end());
  o.forward_signals = ResolveForwardSignals(raw, o.signals_to_handle);
  o.shutdown_timeout = ResolveShutdownTimeout(raw, env);
  o.exit_barrier_timeout = ResolveExitBarrierTimeout(raw, env);
  o.virtual_local_rank = FlagOf(raw, OptionId::kVirtualLocalRank);
  o.worker_store = ResolveWorkerStore(TextOr(raw, OptionId::kWorkerStore));
  o.hang_timeout = ResolveHangTimeout(raw);
  o.exit_code_mode = ResolveExitCode(TextOr(raw, OptionId::kExitCode));
  ResolveStatus(raw, env, o);
  o.module = FlagOf(raw, OptionId::kModule);
  o.no_python = FlagOf(raw, OptionId::kNoPython);
  o.run_path = FlagOf(raw, OptionId::kRunPath);
  o.legacy_launch = FlagOf(raw, OptionId::kLegacyLaunch);
  o.use_env = FlagOf(raw, OptionId::kUseEnv);
  if (o.legacy_launch && !o.use_env && o.no_python) {  // the module's own check
    ValueError("When using the '--no-python' flag, you must also set the '--use-env' flag.");
  }
  if (!o.run_path && o.module && o.no_python) {  // --run-path takes precedence in torchrun
    ValueError("Don't use both the '--no-python' flag and the '--module' flag at the same time.");
  }
}

void RecordSources(const RawValues& raw, LaunchOptions& o) {
  for (const auto& [id, value] : raw) o.sources[std::string(SpecFor(id).name)] = value.source;
}

// Static rendezvous: node ranks are 0..nnodes-1; a larger one would wait for a slot that
// never exists until the rendezvous timeout (torchrun hangs the same way).
void CheckNodeRank(const LaunchOptions& o) {
  if (o.rdzv_backend != "static" || o.standalone || o.node_rank < o.max_nodes) return;
  ValueError("--node-rank " + std::to_string(o.node_rank) +
             " is out of range for --nnodes=" + std::to_string(o.max_nodes) +
             " (node ranks are 0 to " + std::to_string(o.max_nodes - 1) + ")");
}

// --standalone replaces the rendezvous options, as torchrun does; say so instead of dropping
// them silently.
void AddStandaloneWarning(const LaunchOptions& o, std::vector<std::string>& warnings) {
  if (!o.standalone) return;
  std::vector<std::string> dropped;
  for (const char* name :
       {"--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--master-addr", "--master-port"}) {
    if (o.IsSet(name)) dropped.emplace_back(name);
  }
  if (!dropped.empty()) {
    warnings.push_back("--standalone picks its own port and run id; ignoring " +
                       Join(dropped, ", "));
  }
}

// torchrun runs a one-node rendezvous through the backend; cpplaunch runs a single-host job
// (no membership to agree on), so a user who named a backend and an endpoint is told what is
// and is not used. c10d's endpoint still places the store; etcd's names etcd, unused.
void AddSingleHostWarning(const LaunchOptions& o, std::vector<std::string>& warnings) {
  if (o.standalone || o.max_nodes != 1 || o.rdzv_backend == "static") return;
  if (!o.IsSet("--rdzv-backend") || !o.IsSet("--rdzv-endpoint")) return;
  const std::string unused = o.rdzv_backend == "c10d"
                                 ? " is not used, only --rdzv-endpoint's address for the store"
                                 : " and --rdzv-endpoint are not used";
  warnings.push_back("--nnodes=1: a single-host job; --rdzv-backend=" + o.rdzv_backend + unused +
                     " (give --nnodes=1:2 or more for an elastic job)");
}

// Newer torchrun's warning, word for word.
void AddWarnings(const LaunchOptions& o, std::vector<std::string>& warnings) {
  if (o.rdzv_backend != "static" && o.rdzv_endpoint.empty() && o.IsSet("--master-addr")) {
    warnings.push_back(
        "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not "
        "specified.");
  }
}

}  // namespace

LaunchOptions ResolveOptions(const RawValues& raw, const EnvMap& env, const HostProbe& host,
                             std::vector<std::string>& warnings) {
  LaunchOptions o;
  RecordSources(raw, o);
  ResolveSizes(raw, env, host, o);
  ResolveRendezvous(raw, o);
  ResolveOutput(raw, o);
  ResolveWorkers(raw, env, o, warnings);
  CheckBackend(o);
  CheckNodeRank(o);
  ResolveRdzvSettings(raw, env, o);
  AddWarnings(o, warnings);
  AddStandaloneWarning(o, warnings);
  AddSingleHostWarning(o, warnings);
  return o;
}

}  // namespace cpplaunch
