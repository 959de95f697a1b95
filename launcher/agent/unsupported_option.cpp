#include "launcher/agent/unsupported_option.h"

namespace cpplaunch {

// Refusing is better than ignoring: a job that silently runs without the plugin or handler
// the user asked for looks like it worked.
std::optional<std::string> UnsupportedOption(const LaunchOptions& o) {
  if (o.logs_specs && *o.logs_specs != "default")
    return "--logs-specs=" + *o.logs_specs +
           " names a Python plugin; cpplaunch has torchrun's default log layout only "
           "(remove the option)";
  if (o.event_log_handler != "null" && o.event_log_handler != "console" &&
      o.event_log_handler != "dynamic_rendezvous")
    return "--event-log-handler=" + o.event_log_handler +
           " is not one of torchrun's event handlers (null, console, dynamic_rendezvous)";
  return std::nullopt;
}

}  // namespace cpplaunch
