#include "launcher/agent/unsupported_option.h"

namespace cpplaunch {

// Refusing is better than ignoring: a job that silently runs without the plugin, binding or
// filter the user asked for looks like it worked.
std::optional<std::string> UnsupportedOption(const LaunchOptions& o) {
  if (o.logs_specs && *o.logs_specs != "default")
    return "--logs-specs=" + *o.logs_specs +
           " names a Python plugin; cpplaunch has torchrun's default log layout only "
           "(remove the option)";
  if (o.numa_binding)
    return "--numa-binding is not supported: cpplaunch does not bind workers to NUMA nodes "
           "(remove the option, or wrap the worker in numactl)";
  if (o.event_log_handler != "null")
    return "--event-log-handler=" + o.event_log_handler +
           " is not supported: cpplaunch emits no torchelastic events (use the default, null)";
  if (!o.duplicate_stdout_filters.empty() || !o.duplicate_stderr_filters.empty())
    return "--duplicate-stdout-filters/--duplicate-stderr-filters are not supported yet "
           "(remove them; grep the per-rank logs written with --redirects/--tee instead)";
  return std::nullopt;
}

}  // namespace cpplaunch
