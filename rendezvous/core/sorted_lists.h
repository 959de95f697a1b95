#pragma once
// The state's sorted lists, in one place: node ids (participants, spares, the set-aside hosts),
// seat numbers (vacant), and lists of (node id, value) pairs sorted by id (strikes, segments).
// Sorted so that every agent derives the same state from the same text, and so that a lookup
// is a binary search. Pure.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cpplaunch {

template <class T, class Key>
bool ContainsSorted(const std::vector<T>& list, const Key& item) {
  return std::binary_search(list.begin(), list.end(), item);
}

// Inserts `item` in order, once.
template <class T>
void InsertSorted(std::vector<T>* list, const T& item) {
  auto at = std::lower_bound(list->begin(), list->end(), item);
  if (at == list->end() || *at != item) list->insert(at, item);
}

template <class T, class Key>
void EraseSorted(std::vector<T>* list, const Key& item) {
  auto at = std::lower_bound(list->begin(), list->end(), item);
  if (at != list->end() && *at == item) list->erase(at);
}

// Where `id` is, or would go, in `pairs` sorted by their node id (const or not).
template <class Pairs>
auto LowerBoundById(Pairs& pairs, std::string_view id) {
  return std::lower_bound(
      pairs.begin(), pairs.end(), id,
      [](const auto& entry, std::string_view key) { return entry.first < key; });
}

// "id<sep>value,id<sep>value" as (id, value) pieces, checked for what both such fields need:
// ids of 1..kMaxNodeIdBytes bytes in strictly increasing order, at most kMaxNodes entries, each
// split at its last `sep`. "" is an empty list; nullopt when malformed. The values are the
// caller's to check.
std::optional<std::vector<std::pair<std::string, std::string_view>>> SplitIdPairs(
    std::string_view text, char sep);

}  // namespace cpplaunch
