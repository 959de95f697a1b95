#include "launcher/cli/std_spec.h"

#include "base/text.h"

namespace cpplaunch {
namespace {

bool IsStdValue(char c) { return c >= '0' && c <= '3'; }

// One "d:v" item of a map.
bool ParseItem(std::string_view item, std::map<int, unsigned>* out) {
  if (item.size() != 3 || !IsDigit(item[0]) || item[1] != ':' || !IsStdValue(item[2])) {
    return false;
  }
  (*out)[item[0] - '0'] = static_cast<unsigned>(item[2] - '0');  // a repeated rank: last wins
  return true;
}

// Every piece must be an item: an empty one ("0:1,") fails, as torchrun's regex does.
bool ParseMap(std::string_view text, std::map<int, unsigned>* out) {
  for (std::string_view item : Split(text, ',')) {
    if (!ParseItem(item, out)) return false;
  }
  return true;
}

}  // namespace

std::optional<StdSpec> StdSpec::Parse(std::string_view text, std::string* error) {
  StdSpec spec;
  if (text.size() == 1 && IsStdValue(text[0])) {
    spec.all_ = static_cast<unsigned>(text[0] - '0');
    return spec;
  }
  if (!text.empty() && ParseMap(text, &spec.per_rank_)) {
    spec.is_map_ = true;
    return spec;
  }
  // torchrun shows its two regular expressions here; the words say the same.
  *error = "'" + std::string(text) +
           "' does not match: give one of 0-3 for every local rank (0 none, 1 stdout, 2 stderr, "
           "3 both), or local_rank:value pairs such as 0:3,1:2";
  return std::nullopt;
}

unsigned StdSpec::bits_for(int local_rank) const {
  if (!is_map_) return all_;
  auto it = per_rank_.find(local_rank);
  return it == per_rank_.end() ? 0 : it->second;
}

}  // namespace cpplaunch
