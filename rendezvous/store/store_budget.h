#pragma once
// StoreBudget: the one memory budget of a store server (docs/store_protocol.md, "Memory
// budget"). Everything a client can make the server hold is counted against one total: stored
// keys, values and queue items (with a fixed per-entry overhead, so many tiny keys count too);
// what is held for requests (the bytes of a request not yet complete, a long request being
// applied in slices, waits' registrations and their keys, input queued behind them); and output
// queued to connections. The table asks before it stores or registers, the server before it
// buffers or queues; a request that does not fit is refused (its connection is closed).
//
// Stored and held data may only use the total minus an output reserve (a sixteenth), so small
// replies (PING, a wake-up, a counter) still find room when clients have filled the store. The
// workers' namespace may use that minus the agents' reserve (another sixteenth), so the agents'
// writes succeed however full workers or strangers made the store (docs/security.md).
//
// Pure bookkeeping: no I/O, no clock. Not thread-safe: one owner (the server's loop thread),
// shared by reference by the tables and sessions of one server.

#include <cstdint>
#include <string>
#include <string_view>

namespace cpplaunch {

struct BudgetLimits {
  // Stored bytes plus queued output, all connections together.
  uint64_t total_bytes = uint64_t{1} << 30;
  // One reply (MULTI_GET, LIST_KEYS), known before it is built; MULTI_GET replies are streamed
  // as the client reads, so this bounds the work of one request rather than memory.
  uint64_t max_reply_bytes = uint64_t{256} << 20;
  // Distinct keys one connection may watch (legacy WATCH_KEY; a repeated watch counts once).
  uint64_t max_watches_per_connection = 4096;
  // What one connection may make the store hold for its requests: its unfinished request, the
  // input queued behind it, and its pending wait's registrations. Also caps one request.
  uint64_t max_connection_bytes = uint64_t{128} << 20;
};

class StoreBudget {
 public:
  // The bookkeeping cost of one stored entry beyond its bytes (hash node, string headers).
  static constexpr uint64_t kEntryOverhead = 64;

  explicit StoreBudget(BudgetLimits limits = {}) : limits_(limits) {}
  const BudgetLimits& limits() const { return limits_; }

  // What one stored key/value (or queue item: key empty) costs.
  static uint64_t EntryCost(std::string_view key, uint64_t value_capacity) {
    return kEntryOverhead + key.size() + value_capacity;
  }

  // True when `bytes` more may be stored or held, leaving the output reserve and `keep_free`
  // more free (the workers' namespace passes agent_reserve()).
  bool CanStore(uint64_t bytes, uint64_t keep_free = 0) const;
  // What the workers' namespace leaves free for the agents'.
  uint64_t agent_reserve() const { return limits_.total_bytes / 16; }
  // The largest request a connection of the workers' namespace could ever have applied: a
  // longer one is refused when its length is read, before its body arrives.
  uint64_t request_ceiling() const;
  // True when `bytes` more output may be queued.
  bool CanQueue(uint64_t bytes) const;

  // Unconditional updates: the callers checked first (or are releasing).
  void AddStored(uint64_t bytes) { stored_ += bytes; }
  void RemoveStored(uint64_t bytes);
  void AddQueued(uint64_t bytes) { queued_ += bytes; }
  void RemoveQueued(uint64_t bytes);
  void AddHeld(uint64_t bytes) { held_ += bytes; }
  void RemoveHeld(uint64_t bytes);

  uint64_t stored() const { return stored_; }
  uint64_t queued() const { return queued_; }
  uint64_t held() const { return held_; }
  uint64_t used() const { return stored_ + queued_ + held_; }

  // "the store's memory budget of 1.0 GiB (1000.0 MiB stored, 2.0 MiB held for requests,
  // 12.0 MiB queued output)".
  std::string Describe() const;

 private:
  uint64_t store_limit() const { return limits_.total_bytes - limits_.total_bytes / 16; }

  BudgetLimits limits_;
  uint64_t stored_ = 0;
  uint64_t queued_ = 0;
  uint64_t held_ = 0;
};

// 1536 -> "1.5 KiB", 8388608 -> "8.0 MiB", 12 -> "12 B".
std::string ByteSize(uint64_t bytes);

}  // namespace cpplaunch
