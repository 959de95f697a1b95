#include "rendezvous/store/owner_table.h"

#include <algorithm>

#include "rendezvous/store/store_budget.h"

namespace cpplaunch {

void OwnerTable::Own(ConnId conn, const std::string& key) {
  owner_of_[key] = conn;
  owned_[conn].push_back(key);
}

void OwnerTable::Release(std::string_view key) {
  auto it = owner_of_.find(std::string(key));
  if (it == owner_of_.end()) return;
  auto owned = owned_.find(it->second);
  if (owned != owned_.end()) {
    std::erase(owned->second, key);
    if (owned->second.empty()) owned_.erase(owned);
  }
  owner_of_.erase(it);
}

void OwnerTable::ReleaseAll() {
  owner_of_.clear();
  owned_.clear();
}

std::vector<std::string> OwnerTable::TakeOwned(ConnId conn) {
  auto it = owned_.find(conn);
  if (it == owned_.end()) return {};
  std::vector<std::string> keys = std::move(it->second);
  owned_.erase(it);
  for (const auto& key : keys) owner_of_.erase(key);
  return keys;
}

bool OwnerTable::AddWill(ConnId conn, std::string key, Bytes value) {
  auto& wills = wills_[conn];
  auto same =
      std::find_if(wills.begin(), wills.end(), [&](const auto& will) { return will.first == key; });
  if (same != wills.end()) {
    // Swapped, not move-assigned: assigning a short string would keep the old buffer.
    same->second.swap(value);
    return true;
  }
  if (wills.size() >= kMaxWills) return false;
  wills.emplace_back(std::move(key), std::move(value));
  return true;
}

void OwnerTable::CancelWills(ConnId conn) { wills_.erase(conn); }

uint64_t OwnerTable::WillsCost(ConnId conn) const {
  auto it = wills_.find(conn);
  if (it == wills_.end()) return 0;
  uint64_t cost = 0;
  for (const auto& [key, value] : it->second) cost += StoreBudget::EntryCost(key, value.capacity());
  return cost;
}

std::vector<std::pair<std::string, Bytes>> OwnerTable::TakeWills(ConnId conn) {
  auto it = wills_.find(conn);
  if (it == wills_.end()) return {};
  auto wills = std::move(it->second);
  wills_.erase(it);
  return wills;
}

}  // namespace cpplaunch
