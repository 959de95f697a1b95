#pragma once
// The text of `cpplaunch --help`, built from the option table. Pure.

#include <string>

#include "launcher/cli/option_table.h"

namespace cpplaunch {

// "one of spawn,fork,forkserver; default: spawn; env PET_START_METHOD": an option's choices,
// default and variable as the help lists them (the man page lists the same).
std::string OptionDetails(const OptionSpec& spec);
// "usage: cpplaunch [options] training_script [training_script_args ...]"
std::string UsageLine();
// Usage line, every option (dash spelling first, underscore alias, default, one line of
// meaning, PET_ variable), the positional arguments and the exit codes.
std::string HelpText();

}  // namespace cpplaunch
