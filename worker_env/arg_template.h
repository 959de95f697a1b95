#pragma once
// torchrun passes every training-script argument through Python's
// string.Template(arg).safe_substitute(local_rank=N). This reproduces that exactly.

#include <string>
#include <string_view>

namespace cpplaunch {

// "$$" -> "$"; "$local_rank" and "${local_rank}" -> local_rank; any other "$name",
// "${name}", a lone "$" or a malformed "${" is kept verbatim. Identifiers are ASCII
// [_A-Za-z][_A-Za-z0-9]*, matched case-sensitively.
std::string SubstituteLocalRank(std::string_view arg, int local_rank);

}  // namespace cpplaunch
