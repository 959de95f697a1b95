#pragma once
// torchrun's command line: every option of the newest torchrun in both spellings
// (--nproc-per-node / --nproc_per_node), argparse's unique-prefix abbreviations, --opt=v
// and --opt v, short -r/-t/-m (also -r3, -r=3, -mr3), PET_<DEST> environment defaults,
// and the training script followed by its arguments, passed on untouched.
//
// Pure apart from the host probe: ParseOptions reads nothing from the process; the
// environment comes in as a value, and the CPU/GPU counts needed for --nproc-per-node
// cpu/gpu/auto come from a HostProbe (the two-argument overload uses the real host).
//
// The parts, in the order a parse uses them: pet_env.h (PET_* through Program_options' name
// mapper), argv_split.h (the split at the script, with argparse's word rules), then
// Program_options over the option words (program_options.h), option_value.h (argparse's type
// and choice checks) and resolve_options.h (torchrun's checks after parsing).

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/exit_code.h"
#include "launcher/cli/rdzv_settings.h"
#include "launcher/cli/std_spec.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// --worker-store: which store the workers' init_process_group("env://") uses.
enum class WorkerStore {
  kAgent,  // the agent's (TORCHELASTIC_USE_AGENT_STORE=True), as torchrun >= 2.4
  kRank0,  // worker rank 0 hosts it on a free MASTER_PORT (=False), as torchrun before 2.4
};

// --exit-code: what cpplaunch returns when a worker fails.
enum class ExitCodeMode {
  kTorchrun,  // 1, as torchrun
  kWorker,    // the root-cause worker's own code (128 + signal for a death by a signal)
};

// Where an option's value came from.
// kEngine: detected from the job's engine (engine_options.h) and treated as given.
enum class OptionSource { kDefault, kEnvironment, kCommandLine, kEngine };

struct LaunchOptions {
  // --nnodes "N" or "MIN:MAX".
  int min_nodes = 1;
  int max_nodes = 1;
  // --nproc-per-node resolved to a count (>= 1); the text as given for messages.
  int nproc_per_node = 1;
  std::string nproc_per_node_text = "1";

  std::string rdzv_backend = "static";  // one of static, c10d, etcd, etcd-v2
  std::string rdzv_endpoint;            // as given; "" = none
  std::string rdzv_id = "none";
  // --rdzv-conf read for the backend (c10d for --standalone); no launcher defaults: a key not
  // given is left for the agent to default.
  RdzvSettings rdzv;
  bool standalone = false;  // not applied here: the agent picks c10d/port/uuid

  int max_restarts = 0;                                                        // >= 0
  std::chrono::nanoseconds monitor_interval = std::chrono::milliseconds(100);  // > 0
  std::string start_method = "spawn";  // spawn/fork/forkserver (from PET_: unchecked)
  std::string event_log_handler = "null";
  std::string role = "default";
  bool module = false;  // -m
  bool no_python = false;
  bool run_path = false;
  // The workers' interpreter when PYTHON_EXEC is unset, as main chose it before the agent
  // (launcher/interpreter/): "" = "python3" on PATH; `python_origin` says why, for the hints.
  std::string python;
  std::string python_origin;
  std::optional<std::string> log_dir;  // nullopt = a new temp dir; "/dev/null" = no files
  StdSpec redirects;                   // -r
  StdSpec tee;                         // -t
  std::optional<std::set<int>> local_ranks_filter;  // nullopt = every rank is shown
  std::vector<std::string> duplicate_stdout_filters;
  std::vector<std::string> duplicate_stderr_filters;

  int node_rank = 0;  // >= 0
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;  // 0..65535; 0 = pick a free port
  std::optional<std::string> local_addr;
  std::optional<std::string> logs_specs;    // torchrun plugin name; no PET_ variable
  std::optional<std::string> numa_binding;  // node/socket/exclusive/core-complex; no PET_
  std::string signals_to_handle_text = "SIGTERM,SIGINT,SIGHUP,SIGQUIT";  // as given
  std::vector<int> signals_to_handle;  // the recognised signals of that list
  // --forward-signals: passed on to every worker's process group; the job keeps running
  // (Slurm's preemption notices). Never in signals_to_handle.
  std::vector<int> forward_signals;
  std::chrono::seconds shutdown_timeout{30};  // >= 0
  // --exit-barrier-timeout (or TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT): how long a multi-host
  // agent whose workers succeeded waits for the other hosts' (torchrun: 300 s, fixed). > 0.
  std::chrono::milliseconds exit_barrier_timeout{std::chrono::seconds(300)};
  bool virtual_local_rank = false;
  std::string engine = "none";  // the engine the options were completed from: slurm, mpi, k8s
  WorkerStore worker_store = WorkerStore::kAgent;
  // --legacy-launch: each worker's script gets --local_rank=N first, as the 1.x
  // torch.distributed.launch module passes it, unless --use-env is given.
  bool legacy_launch = false;
  bool use_env = false;  // accepted alone too: torchrun's behaviour, no argument added
  // --hang-timeout: no progress for this long ends the job with every rank's stack
  // (hang_watch.h); nullopt = off (the default).
  std::optional<std::chrono::milliseconds> hang_timeout;
  ExitCodeMode exit_code_mode = ExitCodeMode::kTorchrun;  // --exit-code
  // --status-port (or torchrun's TORCHELASTIC_HEALTH_CHECK_PORT): the agent's HTTP endpoint
  // (launcher/status/); 0 = a free port; nullopt = off (the default). --status-addr: where it
  // listens (loopback unless the user says otherwise).
  std::optional<int> status_port;
  std::string status_addr = "127.0.0.1";

  std::string training_script;
  std::vector<std::string> training_script_args;

  // Canonical option name ("--nproc-per-node") -> source, for every option set on the
  // command line or through PET_*. Tells a value the user chose from a default: a chosen
  // --master-port must be bound as given (SingleHostJob), and the --standalone and
  // --master-addr warnings name only what the user set.
  std::map<std::string, OptionSource, std::less<>> sources;
  bool IsSet(std::string_view canonical_name) const { return sources.count(canonical_name) != 0; }
};

enum class ParseStatus {
  kOk,          // options is valid
  kHelp,        // message holds the help text: print it to stdout, exit 0
  kVersion,     // --version: print the program's version (base/version.h) to stdout, exit 0
  kUsageError,  // argparse-class error: "cpplaunch: error: <message>" + hint, exit 2
  kValueError,  // a value torchrun rejects after parsing (it dies with exit 1)
  kRefused,     // the job's engine contradicts an option or cannot be used: one line, exit 2
};

struct ParseResult {
  ParseStatus status = ParseStatus::kOk;
  LaunchOptions options;              // meaningful for kOk
  std::string message;                // help text, or a one-line error
  std::vector<std::string> warnings;  // print each to stderr (e.g. skipped signal names)
  std::vector<std::string> notes;     // print each to stderr as "cpplaunch: <note>" (the engine)

  bool ok() const { return status == ParseStatus::kOk; }
  // The process's exit status for this parse, ProcessExitCode(ExitCodeFor(status)): what
  // main returns when the parse ends the process.
  int exit_code() const;
};

// The exit code for a parse that ends the process: kSuccess for kOk, kHelp and kVersion, kUsage for
// kUsageError and kRefused, kFailure for kValueError.
ExitCode ExitCodeFor(ParseStatus status);

// Counts for --nproc-per-node cpu/gpu/auto; called only when needed.
struct HostProbe {
  std::function<int()> online_cpus;
  std::function<int()> physical_gpus;  // before CUDA_VISIBLE_DEVICES is applied
};
HostProbe RealHostProbe();

// argv without argv[0]; env is the agent's environment (PET_*, CUDA_VISIBLE_DEVICES,
// TORCH_ELASTIC_SHUTDOWN_TIMEOUT are read from it).
ParseResult ParseOptions(const std::vector<std::string>& argv, const EnvMap& env,
                         const HostProbe& host);
inline ParseResult ParseOptions(const std::vector<std::string>& argv, const EnvMap& env) {
  return ParseOptions(argv, env, RealHostProbe());
}

}  // namespace cpplaunch
