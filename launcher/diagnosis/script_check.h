#pragma once
// A look at the training script before any worker starts (and before any restart is spent), for
// mistakes that would otherwise surface as N copies of a confusing error (torchrun shows them
// all, once per restart).

#include <optional>
#include <string>

#include "launcher/cli/options.h"

namespace cpplaunch {

// One line naming the problem and the fix, or nullopt:
//   * a script that does not exist (run through python, not -m);
//   * with --no-python, a program that execvp would not find on `path_value` (the workers'
//     PATH; null = unset) or may not execute;
//   * a compiled program (an ELF file) launched without --no-python, which Python reports as
//     "SyntaxError: Non-UTF-8 code".
// Blocking filesystem reads; never throws.
std::optional<std::string> ScriptProblem(const LaunchOptions& options, const char* path_value);

}  // namespace cpplaunch
