#include "launcher/agent/launch_check.h"

#include "launcher/agent/process_capacity.h"
#include "launcher/agent/start_store.h"
#include "launcher/agent/unsupported_option.h"
#include "launcher/cli/script_check.h"
#include "launcher/process/posix_sys.h"

namespace cpplaunch {

std::optional<Refusal> CheckLaunch(const LaunchOptions& options, const EnvMap& env,
                                   const std::function<void(const std::string&)>& info,
                                   NumaPlacement& placement, StoreSecurity& security) {
  if (auto problem = UnsupportedOption(options)) return Refusal{*problem, ExitCode::kUsage};
  const auto path = Lookup(env, "PATH");
  if (auto problem = ScriptProblem(options, path ? path->c_str() : nullptr)) {
    return Refusal{*problem, ExitCode::kUsage};
  }
  if (auto problem = placement.Bind(options, env, info)) {
    return Refusal{*problem, ExitCode::kUsage};
  }
  std::string error;
  auto loaded = LoadStoreSecurity(options.rdzv_conf, env, &error);
  if (!loaded) return Refusal{error, ExitCode::kUsage};
  auto budget = StoreBudgetFromConf(options.rdzv_conf, &error);
  if (!budget) return Refusal{error, ExitCode::kFailure};
  security = std::move(*loaded);
  security.budget = *budget;
  if (auto problem = ProcessCapacityProblem(options.nproc_per_node, posix::ReadPidLimits())) {
    return Refusal{*problem, ExitCode::kUsage};
  }
  return std::nullopt;
}

}  // namespace cpplaunch
