#pragma once
// "did you mean --nproc-per-node?" for a mistyped long option: argparse (and torchrun) only say
// "unrecognized arguments". Pure; thread-safe.

#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// The option spelling (either of the table's, e.g. --nproc_per_node) closest to `word` (its
// "=value" part ignored) by edit distance, when it is close enough to be a typo: at most 2
// edits, or a quarter of the name for longer names. nullopt for words that are not long
// options or are near no option.
std::optional<std::string> SuggestOption(std::string_view word);

}  // namespace cpplaunch
