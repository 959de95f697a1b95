#include "launcher/agent/launch_check.h"

#include "launcher/agent/unsupported_option.h"
#include "launcher/diagnosis/script_check.h"
#include "launcher/multihost/start_store.h"
#include "launcher/placement/process_capacity.h"
#include "launcher/process/posix_sys.h"

namespace cpplaunch {

std::optional<LaunchRefusal> CheckLaunch(const LaunchOptions& options, const EnvMap& env,
                                         const std::function<void(const std::string&)>& info,
                                         NumaPlacement& placement, StoreSecurity& security) {
  if (auto problem = UnsupportedOption(options)) return LaunchRefusal{*problem, ExitCode::kUsage};
  const auto path = Lookup(env, "PATH");
  if (auto problem = ScriptProblem(options, path ? path->c_str() : nullptr)) {
    return LaunchRefusal{*problem, ExitCode::kUsage};
  }
  if (auto problem = placement.Bind(options, env, info)) {
    return LaunchRefusal{*problem, ExitCode::kUsage};
  }
  std::string error;
  auto loaded = LoadStoreSecurity(options.rdzv.store, &error);
  if (!loaded) return LaunchRefusal{error, ExitCode::kUsage};
  security = std::move(*loaded);
  if (auto problem = ProcessCapacityProblem(options.nproc_per_node, posix::ReadPidLimits())) {
    return LaunchRefusal{*problem, ExitCode::kUsage};
  }
  return std::nullopt;
}

}  // namespace cpplaunch
