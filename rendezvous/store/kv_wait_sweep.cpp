// KvTable's sweep of stale wait registrations (kv_table.h): those of waits cancelled, replaced
// or gone with their connection stay in the waits' table, skipped when their key is touched,
// until a sweep removes them. A closed attacker's WAIT can leave 131,072 of them, many such
// connections a million or more: the sweep is done a slice of keys at a time, which the server
// runs between its other work (ReleaseSome), and they stay in the budget until it is done.

#include <algorithm>

#include "rendezvous/store/kv_table.h"

namespace cpplaunch {
namespace {

// Sweep once stale entries are both numerous and the majority: amortised O(1) per cancelled
// registration, and no per-key bookkeeping on the hot path.
constexpr size_t kSweepThreshold = 1024;

}  // namespace

// A sweep starts when stale entries are numerous and the majority, or when no live entry is
// left (the last waiter went): a closed connection's registrations must not stay in memory for
// want of more closes. The server then runs it in slices (ReleaseSome).
void KvTable::StartSweep() {
  if (sweeping_) return;
  if ((stale_entries_ > kSweepThreshold && stale_entries_ * 2 > total_entries_) ||
      (stale_entries_ > 0 && stale_entries_ >= total_entries_)) {
    sweeping_ = true;
    sweep_shard_ = 0;
    sweep_bucket_ = 0;
    sweep_removed_ = 0;
  }
}

// Visits up to `max_keys` keys of the sweep's next buckets; true while the sweep goes on.
bool KvTable::SweepSome(size_t max_keys) {
  size_t visited = 0;
  while (visited < max_keys && sweep_shard_ < decltype(waiting_)::kShards) {
    auto& shard = waiting_.shard(sweep_shard_);
    if (sweep_bucket_ < shard.bucket_count()) {
      visited += SweepBucket(shard, sweep_bucket_++);
      continue;
    }
    // An emptied shard gives its bucket array back (a million keys' worth is 8 MiB or more).
    if (shard.empty()) WaitShard().swap(shard);
    ++sweep_shard_;
    sweep_bucket_ = 0;
  }
  if (sweep_shard_ < decltype(waiting_)::kShards) return true;
  sweeping_ = false;
  // Entries that went stale during the pass, in buckets it had passed, need another; a pass
  // that removed nothing does not start one (the counts would be wrong: no busy loop then).
  if (sweep_removed_ > 0) StartSweep();
  return sweeping_;
}

// Removes the stale entries of one bucket's keys, and the keys left with none; returns how many
// keys it visited.
size_t KvTable::SweepBucket(WaitShard& shard, size_t bucket) {
  auto stale = [this](const WaitEntry& entry) {
    return waiters_[entry.conn].ticket != entry.ticket;
  };
  size_t visited = 0;
  for (auto it = shard.begin(bucket); it != shard.end(bucket);) {
    ++visited;
    auto& entries = it->second;
    auto tail = std::remove_if(entries.begin(), entries.end(), stale);
    const auto removed = static_cast<size_t>(entries.end() - tail);
    total_entries_ -= removed;
    stale_entries_ -= std::min(removed, stale_entries_);
    sweep_removed_ += removed;
    ReleaseEntries(removed);
    entries.erase(tail, entries.end());
    auto current = it++;  // erasing a node leaves the others' (local) iterators valid
    if (entries.empty()) {
      budget_->RemoveHeld(WaitKeyCost(current->first));
      shard.erase(shard.find(current->first));
    } else if (removed > 0 && entries.capacity() > 2 * entries.size()) {
      entries.shrink_to_fit();
    }
  }
  return visited;
}

}  // namespace cpplaunch
