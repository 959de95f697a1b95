#include "launcher/cli/option_suggestion.h"

#include <algorithm>
#include <vector>

#include "launcher/cli/option_table.h"

namespace cpplaunch {
namespace {

// Levenshtein distance, two rows.
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1);
  std::vector<std::size_t> current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

// A misspelled last word is often too far by edits ("--master-adress" is 4 from
// "--master-addr"), yet its first letters name one option: the word follows the name up to
// its last word and two letters into it.
std::optional<std::string> SharedStem(std::string_view word) {
  std::optional<std::string> found;
  for (const OptionSpec& spec : OptionTable()) {
    for (std::string_view name : {spec.name, spec.alias}) {
      const std::size_t last_word = name.find_last_of("-_") + 1;
      if (name.empty() || last_word < 3 || word.size() < last_word + 2) continue;
      if (word.substr(0, last_word + 2) != name.substr(0, last_word + 2)) continue;
      if (found && *found != name) return std::nullopt;  // two options: no guess
      found = std::string(name);
    }
  }
  return found;
}

}  // namespace

std::optional<std::string> SuggestOption(std::string_view word) {
  if (word.size() < 3 || word.substr(0, 2) != "--") return std::nullopt;
  word = word.substr(0, word.find('='));
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 4) + 1;
  for (const OptionSpec& spec : OptionTable()) {
    for (std::string_view name : {spec.name, spec.alias}) {
      if (name.empty()) continue;
      const std::size_t distance = EditDistance(word, name);
      if (distance < best_distance) {
        best_distance = distance;
        best = std::string(name);
      }
    }
  }
  return best ? best : SharedStem(word);
}

}  // namespace cpplaunch
