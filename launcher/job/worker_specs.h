#pragma once
// Who runs what: the plain description of one attempt's local workers (argv, environment and
// where their stdout and stderr go), as torchrun builds it from the options, the rank layout,
// the job's shared facts and the log directory's paths. Pure: nothing is opened or started;
// the agent turns each WorkerSpec into a ProcessSpec once WorkerOutput has opened its streams.

#include <optional>
#include <string>
#include <vector>

#include "launcher/cli/options.h"
#include "launcher/output/log_dir.h"
#include "launcher/output/worker_output.h"
#include "worker_env/env_builder.h"
#include "worker_env/env_map.h"
#include "worker_env/rank_layout.h"
#include "worker_env/worker_command.h"

namespace cpplaunch {

// One local worker, ready to spawn once its streams are open.
struct WorkerSpec {
  int local_rank = 0;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value", complete
  WorkerStreams streams;         // routes, console prefix and log file paths
};

// What every worker of one attempt shares and the options do not say: where the store is, the
// run id and which attempt this is.
struct AttemptFacts {
  std::string run_id;
  std::string master_addr;
  int master_port = 0;
  int restart_count = 0;
};

// The command the workers run. --run-path runs the script through runpy in the worker's own
// Python (as torchrun does in its own), so it becomes `-c <bootstrap>`.
CommandSpec WorkerCommandSpec(const LaunchOptions& options);

// The argv of local rank `local_rank` (argv[0] is the program, e.g. the failure report's
// "binary").
std::vector<std::string> WorkerArgv(const LaunchOptions& options, const EnvMap& agent_env,
                                    int local_rank);

// One spec per worker of `layout`, in local-rank order. Returns nullopt with *error when a
// worker's environment cannot be built (--virtual-local-rank with too short a
// CUDA_VISIBLE_DEVICES).
// Streams the worker would inherit from the agent go through the agent instead, written to the
// console as they were (no prefix, no file), so that the agent sees their lines (--hang-timeout
// counts them, --status-port notes each rank's last output); with the rank's prefix when its
// other stream was already tee'd by -t, as the two share one prefix. A pipe instead of the
// agent's terminal makes a Python worker's stdout block-buffered, as under -t.
void RouteThroughAgent(WorkerStreams& streams);

std::optional<std::vector<WorkerSpec>> BuildWorkerSpecs(const LaunchOptions& options,
                                                        const EnvMap& agent_env,
                                                        const RankLayout& layout,
                                                        const AttemptFacts& facts,
                                                        const LogDir& log_dir, std::string* error);

}  // namespace cpplaunch
