#pragma once
// What the agent checks before it starts anything (no store, no worker, no restart spent), in
// this order: an option cpplaunch does not support, a script that cannot run (every attempt
// would fail alike), --numa-binding the host cannot satisfy, the store's secret file (named by
// --rdzv-conf, read here), and whether --nproc-per-node fits the host's PID limits.
// Threads: the agent's thread, before its loop runs. Reads files; never throws.

#include <functional>
#include <optional>
#include <string>

#include "base/exit_code.h"
#include "launcher/agent/numa_placement.h"
#include "launcher/cli/options.h"
#include "launcher/multihost/store_security.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// Why the agent will not run the job, and the code it exits with. (Not named Refusal: that is
// the rendezvous' type, and two classes of one name in one namespace share one out-of-line
// destructor at link time, whichever the linker keeps.)
struct LaunchRefusal {
  std::string problem;
  ExitCode code = ExitCode::kUsage;
};

// nullopt when the job may run; then `placement` holds each rank's CPUs (said through `info`)
// and `security` the store's secret, allow-list and budget.
std::optional<LaunchRefusal> CheckLaunch(const LaunchOptions& options, const EnvMap& env,
                                         const std::function<void(const std::string&)>& info,
                                         NumaPlacement& placement, StoreSecurity& security);

}  // namespace cpplaunch
