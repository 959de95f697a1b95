#pragma once
// argparse's checks of one option's text, with argparse's wording: type= (int, float) and
// choices=. Both are usage errors (exit 2). Also torchrun's reading of a flag's PET_
// variable. Failures throw ParseFailure (parse_failure.h).

#include <string>
#include <string_view>

#include "launcher/cli/option_table.h"

namespace cpplaunch {

// "argument --max-restarts/--max_restarts: invalid int value: 'x'"; Python's int()/float().
void CheckType(const OptionSpec& spec, std::string_view text);
// "argument ...: invalid choice: 'thread' (choose from 'spawn', 'fork', 'forkserver')".
void CheckChoice(const OptionSpec& spec, std::string_view text);
// torchrun reads a flag's variable as int(value) != 0: "1" or "0"; anything that is not an
// integer is a value error (exit 1) naming the variable.
std::string FlagFromEnvironment(const OptionSpec& spec, const std::string& value);

}  // namespace cpplaunch
