#pragma once
// The text of `cpplaunch --help`, built from the option table. Pure.

#include <string>

namespace cpplaunch {

// "usage: cpplaunch [options] training_script [training_script_args ...]"
std::string UsageLine();
// Usage line, every option (dash spelling first, underscore alias, default, one line of
// meaning, PET_ variable), the positional arguments and the exit codes.
std::string HelpText();

}  // namespace cpplaunch
