#pragma once
// The store's state with PyTorch TCPStore semantics (docs/store_protocol.md): keys, values,
// counters, queues, pending waits and legacy key watches. Pure: no locks, no clock, no I/O.
// Each request returns TableEffects saying which bytes go to which connection; the server
// delivers them. Not thread-safe: one owner (the server's loop thread).
//
// Bounded: what a request would store, and every reply and notification, is sized and checked
// against the StoreBudget before it is built. Long requests (CHECK, WAIT, MULTI_GET, MULTI_SET
// beyond one slice of keys or bytes) are applied in slices: Apply does the first, and the caller
// runs Continue later, letting other work run in between (kv_long_requests.cpp).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rendezvous/store/owner_table.h"
#include "rendezvous/store/sharded_map.h"
#include "rendezvous/store/store_budget.h"
#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

// Identifies a connection. The table indexes arrays by it, so ids should be small and dense
// (the server reuses the ids of closed connections after calling Disconnect).
using ConnId = uint32_t;

// What one request produced. Delivery order per connection: `reply` to the requester, then one
// STOP_WAITING byte to every connection in `woken` (possibly the requester), then `notices`.
struct TableEffects {
  // One legacy WATCH_KEY notification, built once for all its watchers.
  struct Notice {
    std::vector<ConnId> conns;
    std::string bytes;  // empty when `size` did not fit the budget: refuse the watchers instead
    uint64_t size = 0;
  };
  std::string reply;
  std::vector<ConnId> woken;
  std::vector<Notice> notices;
  // Non-empty: the request failed (GET of a missing key, ADD on a non-numeric value, ...); the
  // reference server closes the requester's connection and so should the caller. Nothing of the
  // request was applied, but for ARM, whose steps before the failing one were (KvTable::Arm).
  std::string error;
  // With `error`: a limit refused the request (the budget, a reply size, the watches of one
  // connection); the error names it, and the server reports it.
  bool refused = false;
  // With `refused`: it was the memory budget (not a reply size, a watch or a wait limit).
  bool over_budget = false;
  // The request is not finished (a long one, applied in slices): the table kept it. Deliver
  // what it produced, then call KvTable::Continue for the same connection after other work ran.
  bool more = false;

  void Clear();
};

class KvTable {
 public:
  // `budget` (not owned; shared with the server) must outlive the table; null: an own budget
  // with the default limits. The table stores and registers only while `keep_free` bytes of the
  // budget stay free (the workers' table keeps the agents' reserve).
  explicit KvTable(StoreBudget* budget = nullptr, uint64_t keep_free = 0);
  KvTable(const KvTable&) = delete;
  KvTable& operator=(const KvTable&) = delete;

  // Applies `request` from `conn` and fills *effects (cleared first). May move from `request`.
  void Apply(ConnId conn, Request& request, TableEffects* effects);
  // Applies the next slice of `conn`'s unfinished request (effects->more was set). Nothing
  // happens when `conn` has none.
  void Continue(ConnId conn, TableEffects* effects);
  // Forgets `conn`'s pending wait, its watches and an unfinished request, deletes the keys it owns
  // (CLAIM) and then carries out its wills (WILL), whose wake-ups and notices land in *effects
  // (cleared first; may be null when the caller cannot deliver them). Call when the connection
  // closes.
  void Disconnect(ConnId conn, TableEffects* effects = nullptr);
  // Deletes every key and queue (CLEAR_WORKER_KEYS), however many, without listing them; returns
  // how many there were. Watchers of deleted keys get KEY_DELETED in *effects (not cleared);
  // pending waits stay registered. O(watched keys): the entries are only set aside, and
  // ReleaseSome() frees them.
  int64_t Clear(TableEffects* effects);
  // Frees up to `max_entries` entries that Clear() set aside, and sweeps up to as many keys'
  // stale wait registrations (those of waits cancelled, replaced or gone with their connection);
  // true while some of either remain (releasing()). The server calls it in turns of its loop, so
  // that freeing 140,000 keys, or a million registrations of closed connections, never holds the
  // loop: a stale registration stays in the budget until it is swept.
  bool ReleaseSome(size_t max_entries);
  bool releasing() const { return sweeping_ || !cleared_keys_.empty() || !cleared_queues_.empty(); }

  // Inspection (tests, stats).
  size_t num_keys() const { return data_.size(); }
  std::optional<Bytes> Find(std::string_view key) const;
  bool waiting(ConnId conn) const;  // has a pending WAIT or BARRIER
  size_t wait_entries() const { return total_entries_; }
  bool unfinished(ConnId conn) const { return long_.count(conn) != 0; }
  const StoreBudget& budget() const { return *budget_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  template <typename V>
  using Map = std::unordered_map<std::string, V, Hash, std::equal_to<>>;

  // One registration of a connection's wait on a key. It is live while the connection's
  // current ticket equals `ticket`; a cancelled or overwritten wait leaves stale entries that are
  // skipped when the key is touched and swept in slices (SweepSome).
  struct WaitEntry {
    ConnId conn;
    uint64_t ticket;
  };
  struct Waiter {
    uint64_t ticket = 0;     // 0: not waiting
    uint64_t remaining = 0;  // entries still to be touched before STOP_WAITING
    uint64_t held = 0;       // what its registrations cost (its connection's share)
  };
  // A registration's cost in the budget: the entry (with its list's slack), and for the first
  // on a key the map node with its copy of the key. Charged until the entry is erased (a stale
  // one too: it is memory until it is swept).
  static constexpr uint64_t kWaitEntryCost = 2 * sizeof(WaitEntry);
  static uint64_t WaitKeyCost(std::string_view key) {
    return StoreBudget::kEntryOverhead + key.size();
  }
  // Where a request applied in slices stands: `next` is the first key not yet handled.
  struct Cursor {
    size_t next = 0;
    bool sized = false;           // MULTI_GET: every key was found and the reply size checked
    uint64_t reply_bytes = 0;     // MULTI_GET: the size found so far
    uint64_t offset = 0;          // MULTI_GET: bytes of the value at `next` already sent
    const char* value = nullptr;  // MULTI_GET: that value's buffer (a replaced value moves)
    uint64_t held = 0;            // the request's own bytes, held in the budget between slices
  };
  struct LongRequest {
    Request request;
    Cursor cursor;
  };

  void Set(Request& request, TableEffects* effects);
  void CompareSet(Request& request, TableEffects* effects);
  void Get(Request& request, TableEffects* effects);
  void Add(Request& request, TableEffects* effects);
  void DeleteKey(Request& request, TableEffects* effects);
  void Append(Request& request, TableEffects* effects);
  void CancelWait(ConnId conn, TableEffects* effects);
  void WatchKey(ConnId conn, Request& request, TableEffects* effects);
  void QueuePush(Request& request, TableEffects* effects);
  void QueuePop(Request& request, TableEffects* effects);
  void QueueLen(Request& request, TableEffects* effects);
  void ListKeys(TableEffects* effects);
  void Barrier(ConnId conn, Request& request, TableEffects* effects);
  void Claim(ConnId conn, Request& request, TableEffects* effects);
  void Will(ConnId conn, Request& request, TableEffects* effects);
  void CancelWills(ConnId conn, TableEffects* effects);
  // ARM (command_table.h). A step that fails (the budget, a counter that is not a number) fails
  // the request with the steps before it applied, as if they had been sent one by one; the
  // caller closes the connection, and the will it just registered is carried out.
  void Arm(ConnId conn, Request& request, TableEffects* effects);
  void Erase(std::string_view key, TableEffects* effects);

  // Stores unless the budget refuses (false, effects->error set, nothing changed).
  bool Store(std::string&& key, Bytes&& value, TableEffects* effects);
  bool Refuse(std::string what, TableEffects* effects);
  void Recharge(uint64_t old_cost, uint64_t new_cost);
  // Long requests (kv_long_requests.cpp). A slice returns true when the request is finished
  // (answered, refused or failed).
  void StartLong(ConnId conn, Request& request, TableEffects* effects);
  bool Slice(ConnId conn, Request& request, Cursor& cursor, TableEffects* effects);
  bool CheckSlice(const Request& request, Cursor& cursor, TableEffects* effects);
  bool WaitSlice(ConnId conn, const Request& request, Cursor& cursor, TableEffects* effects);
  bool MultiGetSlice(const Request& request, Cursor& cursor, TableEffects* effects);
  bool MultiSetSlice(Request& request, Cursor& cursor, TableEffects* effects);
  static uint64_t HeldCost(const Request& request, size_t first_pair);
  void DropLong(ConnId conn);
  bool Fits(uint64_t bytes) const { return budget_->CanStore(bytes, keep_free_); }
  bool Register(ConnId conn, const std::string& key, Waiter& waiter, TableEffects* effects);
  void ReleaseEntries(size_t count) { budget_->RemoveHeld(count * kWaitEntryCost); }
  bool AddToCounter(const std::string& key, int64_t delta, int64_t* result, TableEffects* effects);
  bool Present(std::string_view key) const;
  void Touch(std::string_view key, TableEffects* effects);
  void WakeOne(std::string_view key, TableEffects* effects);
  bool CountTouch(const WaitEntry& entry, TableEffects* effects);
  void DropWait(ConnId conn);
  using WaitShard = ShardedMap<std::vector<WaitEntry>>::Shard;
  // The sweep of stale registrations (kv_wait_sweep.cpp).
  void StartSweep();
  bool SweepSome(size_t max_keys);
  size_t SweepBucket(WaitShard& shard, size_t bucket);
  Waiter& WaiterOf(ConnId conn);
  void Notify(std::string_view key, uint8_t type, std::string_view old_value,
              std::string_view new_value, TableEffects* effects);

  StoreBudget own_budget_;
  StoreBudget* budget_;
  uint64_t keep_free_;
  Map<Bytes> data_;
  uint64_t key_bytes_ = 0;  // sum of data_'s key sizes: LIST_KEYS is sized in O(1)
  Map<std::deque<Bytes>> queues_;
  ShardedMap<std::vector<WaitEntry>> waiting_;  // split: its keys can be millions
  std::vector<Waiter> waiters_;                 // indexed by ConnId
  uint64_t next_ticket_ = 1;
  size_t total_entries_ = 0;  // entries in waiting_, live or stale
  size_t stale_entries_ = 0;
  // A sweep in progress walks waiting_'s shards and their buckets from sweep_bucket_ of
  // sweep_shard_ (a rehash between slices only makes that pass miss some entries; a later pass
  // takes them).
  bool sweeping_ = false;
  size_t sweep_shard_ = 0;
  size_t sweep_bucket_ = 0;
  size_t sweep_removed_ = 0;                                      // entries the pass removed so far
  Map<std::vector<ConnId>> watchers_;                             // legacy WATCH_KEY
  std::unordered_map<ConnId, std::vector<std::string>> watched_;  // for Disconnect
  OwnerTable owners_;                                             // CLAIM and WILL
  std::vector<Map<Bytes>> cleared_keys_;                          // Clear() -> ReleaseSome()
  std::vector<Map<std::deque<Bytes>>> cleared_queues_;
  std::unordered_map<ConnId, LongRequest> long_;  // requests in slices
};

// Parses `text` as C++ std::stoll does (leading whitespace, optional sign, decimal digits,
// trailing junk ignored; stops at a NUL). nullopt when there are no digits or it overflows.
// Not base/text's ParsePythonInt on purpose: PyTorch's server reads an ADD counter with
// std::stoll, so "12abc" counts as 12 and "1_000" as 1 here, where Python's int() refuses both;
// a store that must answer ADD exactly as PyTorch's needs PyTorch's rule.
std::optional<int64_t> ParseStoll(std::string_view text);

// 'key' for messages, cut after 200 bytes ("...").
std::string QuotedKey(std::string_view key);

}  // namespace cpplaunch
