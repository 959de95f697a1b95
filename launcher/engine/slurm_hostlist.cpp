#include "launcher/engine/slurm_hostlist.h"

#include "base/text.h"

namespace cpplaunch {
namespace {

// One bracket group, expanded to its suffixes ("009", "010", "011").
using Group = std::vector<std::string>;

struct Entry {
  std::vector<std::string> texts;  // texts[i] comes before groups[i]; one more text than groups
  std::vector<Group> groups;
};

std::string Padded(unsigned long long number, size_t width) {
  std::string digits = std::to_string(number);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

bool AllDigits(std::string_view text) {
  if (text.empty() || text.size() > 18) return false;  // 18 digits always fit in 64 bits
  for (char c : text) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// "1-3" or "7" inside a group.
bool ExpandItem(std::string_view item, Group& group, std::string* error) {
  const size_t dash = item.find('-');
  const std::string_view lo = item.substr(0, dash);
  const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
  if (!AllDigits(lo) || !AllDigits(hi)) {
    *error = "'" + std::string(item) + "' in brackets is not a number or a range lo-hi";
    return false;
  }
  const unsigned long long first = std::stoull(std::string(lo));
  const unsigned long long last = std::stoull(std::string(hi));
  if (first > last) {
    *error = "range " + std::string(item) + " runs backwards";
    return false;
  }
  if (last - first >= kMaxHostlistNames) {
    *error = "range " + std::string(item) + " names more than " +
             std::to_string(kMaxHostlistNames) + " hosts";
    return false;
  }
  for (unsigned long long n = first; n <= last; ++n) group.push_back(Padded(n, lo.size()));
  return true;
}

bool ExpandGroup(std::string_view inside, Group& group, std::string* error) {
  if (inside.empty()) {
    *error = "empty brackets []";
    return false;
  }
  for (std::string_view item : Split(inside, ',')) {
    if (!ExpandItem(item, group, error)) return false;
  }
  return true;
}

// Splits at commas outside brackets; checks that brackets pair up and do not nest.
bool SplitEntries(std::string_view list, std::vector<std::string_view>& entries,
                  std::string* error) {
  size_t start = 0;
  bool open = false;
  for (size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[' || c == ']') {
      if (open == (c == '[')) {
        *error = std::string("unbalanced '") + c + "' at offset " + std::to_string(i);
        return false;
      }
      open = c == '[';
    } else if (c == ',' && !open) {
      entries.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (open) {
    *error = "unbalanced '['";
    return false;
  }
  return true;
}

bool ParseEntry(std::string_view text, Entry& entry, std::string* error) {
  if (text.empty()) {
    *error = "empty host name";
    return false;
  }
  for (;;) {
    const size_t open = text.find('[');
    entry.texts.emplace_back(text.substr(0, open));
    if (open == std::string_view::npos) break;
    const size_t close = text.find(']', open);
    Group group;
    if (!ExpandGroup(text.substr(open + 1, close - open - 1), group, error)) return false;
    entry.groups.push_back(std::move(group));
    text = text.substr(close + 1);
  }
  if (!entry.groups.empty() && !entry.texts.back().empty()) {
    *error = "text '" + entry.texts.back() +
             "' after the last ']' (Slurm allows only more bracket groups there)";
    return false;
  }
  return true;
}

// The product of the entry's groups, the first group outermost.
bool AppendNames(const Entry& entry, std::vector<std::string>& names, std::string* error) {
  std::vector<std::string> partial{entry.texts.front()};
  for (size_t g = 0; g < entry.groups.size(); ++g) {
    if (partial.size() * entry.groups[g].size() > kMaxHostlistNames) {
      *error = "names more than " + std::to_string(kMaxHostlistNames) + " hosts";
      return false;
    }
    std::vector<std::string> next;
    next.reserve(partial.size() * entry.groups[g].size());
    for (const std::string& head : partial) {
      for (const std::string& suffix : entry.groups[g])
        next.push_back(head + suffix + entry.texts[g + 1]);
    }
    partial = std::move(next);
  }
  if (names.size() + partial.size() > kMaxHostlistNames) {
    *error = "names more than " + std::to_string(kMaxHostlistNames) + " hosts";
    return false;
  }
  names.insert(names.end(), partial.begin(), partial.end());
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> ExpandHostlist(std::string_view list, std::string* error) {
  std::vector<std::string_view> entries;
  if (list.empty()) {
    *error = "the list is empty";
    return std::nullopt;
  }
  if (!SplitEntries(list, entries, error)) return std::nullopt;
  std::vector<std::string> names;
  for (std::string_view text : entries) {
    Entry entry;
    if (!ParseEntry(text, entry, error) || !AppendNames(entry, names, error)) return std::nullopt;
  }
  return names;
}

}  // namespace cpplaunch
