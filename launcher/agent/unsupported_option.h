#pragma once
// Options the command line accepts (torchrun has them) but this build cannot honour.

#include <optional>
#include <string>

#include "launcher/cli/options.h"

namespace cpplaunch {

// A one-line message naming the option and what to do instead, or nullopt when everything
// asked for is supported. The agent exits with ExitCode::kUsage after printing it.
std::optional<std::string> UnsupportedOption(const LaunchOptions& options);

}  // namespace cpplaunch
