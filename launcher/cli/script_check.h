#pragma once
// A look at the training script before any worker starts, for mistakes that would otherwise
// surface as N copies of a confusing Python error (torchrun shows them all).

#include <optional>
#include <string>

#include "launcher/cli/options.h"

namespace cpplaunch {

// One line naming the problem and the fix, or nullopt. Today: a compiled program (an ELF
// file) launched without --no-python, which Python reports as "SyntaxError: Non-UTF-8 code".
// Reads the first bytes of the script; a file that cannot be read is not a problem here.
std::optional<std::string> ScriptProblem(const LaunchOptions& options);

}  // namespace cpplaunch
