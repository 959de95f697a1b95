#pragma once
// What agent connections leave behind (docs/security.md): keys a connection owns (CLAIM), which
// go when it closes, and its wills (WILL), values set when it closes. The KvTable of the agents'
// namespace keeps one and applies what Take*() returns. Pure; not thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

using ConnId = uint32_t;

class OwnerTable {
 public:
  // Wills per connection; one more is refused (a client bug, not a reason to grow).
  static constexpr size_t kMaxWills = 64;

  // `key` (just created by `conn`) is owned by `conn`.
  void Own(ConnId conn, const std::string& key);
  // `key` was deleted: nobody owns it any more (a later CLAIM by another connection must not be
  // deleted when this owner closes).
  void Release(std::string_view key);
  void ReleaseAll();
  // The keys `conn` still owns; forgets them.
  std::vector<std::string> TakeOwned(ConnId conn);

  // Records (or replaces, for the same key) a will of `conn`; false over kMaxWills.
  bool AddWill(ConnId conn, std::string key, Bytes value);
  void CancelWills(ConnId conn);
  // What `conn`'s wills cost the store's budget (StoreBudget::EntryCost of each).
  uint64_t WillsCost(ConnId conn) const;
  // `conn`'s wills in the order given; forgets them.
  std::vector<std::pair<std::string, Bytes>> TakeWills(ConnId conn);

  size_t owned_count() const { return owner_of_.size(); }

 private:
  std::unordered_map<std::string, ConnId> owner_of_;
  std::unordered_map<ConnId, std::vector<std::string>> owned_;
  std::unordered_map<ConnId, std::vector<std::pair<std::string, Bytes>>> wills_;
};

}  // namespace cpplaunch
