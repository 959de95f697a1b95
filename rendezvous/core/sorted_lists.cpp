#include "rendezvous/core/sorted_lists.h"

#include "base/text.h"
#include "rendezvous/core/record_limits.h"

namespace cpplaunch {

std::optional<std::vector<std::pair<std::string, std::string_view>>> SplitIdPairs(
    std::string_view text, char sep) {
  std::vector<std::pair<std::string, std::string_view>> pairs;
  if (text.empty()) return pairs;
  for (std::string_view item : Split(text, ',')) {
    const size_t at = item.rfind(sep);
    if (at == std::string_view::npos || at == 0 || at > record_limits::kMaxNodeIdBytes ||
        static_cast<int64_t>(pairs.size()) >= record_limits::kMaxNodes) {
      return std::nullopt;
    }
    std::string id(item.substr(0, at));
    if (!pairs.empty() && !(pairs.back().first < id)) return std::nullopt;
    pairs.emplace_back(std::move(id), item.substr(at + 1));
  }
  return pairs;
}

}  // namespace cpplaunch
