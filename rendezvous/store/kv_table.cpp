#include "rendezvous/store/kv_table.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "rendezvous/store/wire/reply_codec.h"

namespace cpplaunch {
namespace {

// Values from this size on are kept at their size, not the capacity their reading left.
constexpr size_t kShrinkFrom = size_t{64} * 1024;

// isspace() in the C locale, which is what strtoll (under std::stoll) skips.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

std::string QuotedKey(std::string_view key) {
  std::string text = "'";
  text.append(key.substr(0, 200));
  if (key.size() > 200) text.append("...");
  text.append("'");
  return text;
}

std::optional<int64_t> ParseStoll(std::string_view text) {
  // std::stoll hands c_str() to strtoll, so the reference reads only up to the first NUL.
  size_t end = text.find('\0');
  if (end != std::string_view::npos) text = text.substr(0, end);
  size_t i = 0;
  while (i < text.size() && IsSpace(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  uint64_t magnitude = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    auto digit = static_cast<uint64_t>(text[i] - '0');
    if (magnitude > (limit - digit) / 10) return std::nullopt;  // out of range, as stoll throws
    magnitude = magnitude * 10 + digit;
  }
  if (digits == 0) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

void TableEffects::Clear() {
  reply.clear();
  woken.clear();
  notices.clear();
  error.clear();
  refused = false;
  over_budget = false;
  more = false;
}

KvTable::KvTable(StoreBudget* budget, uint64_t keep_free)
    : budget_(budget != nullptr ? budget : &own_budget_), keep_free_(keep_free) {}

void KvTable::Apply(ConnId conn, Request& request, TableEffects* effects) {
  effects->Clear();
  switch (request.command) {
    case Command::kValidate:
      return;  // the decoder checked the magic
    case Command::kSet:
      return Set(request, effects);
    case Command::kCompareSet:
      return CompareSet(request, effects);
    case Command::kGet:
      return Get(request, effects);
    case Command::kAdd:
      return Add(request, effects);
    case Command::kCheck:
    case Command::kWait:
    case Command::kMultiGet:
    case Command::kMultiSet:
      // Applied in slices (kv_long_requests.cpp).
      return StartLong(conn, request, effects);
    case Command::kGetNumKeys:
      // Keys only, not queues, as the libuv server counts (the legacy one has no queues).
      return EncodeI64(static_cast<int64_t>(data_.size()), &effects->reply);
    case Command::kWatchKey:
      return WatchKey(conn, request, effects);
    case Command::kDeleteKey:
      return DeleteKey(request, effects);
    case Command::kAppend:
      return Append(request, effects);
    case Command::kCancelWait:
      return CancelWait(conn, effects);
    case Command::kPing:
      return EncodeU32(request.u32, &effects->reply);
    case Command::kQueuePush:
      return QueuePush(request, effects);
    case Command::kQueuePop:
      return QueuePop(request, effects);
    case Command::kQueueLen:
      return QueueLen(request, effects);
    case Command::kListKeys:
      return ListKeys(effects);
    case Command::kBarrier:
      return Barrier(conn, request, effects);
    case Command::kClaim:
      return Claim(conn, request, effects);
    case Command::kWill:
      return Will(conn, request, effects);
    case Command::kCancelWills:
      return CancelWills(conn, effects);
    case Command::kArm:
      return Arm(conn, request, effects);
    case Command::kAgentHello:
    case Command::kAgentProof:
    case Command::kClearWorkerKeys:
      return;  // the server's: they concern the connection or the other namespace
  }
}

std::optional<Bytes> KvTable::Find(std::string_view key) const {
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

bool KvTable::waiting(ConnId conn) const {
  return conn < waiters_.size() && waiters_[conn].ticket != 0;
}

// ---- Commands

void KvTable::Set(Request& request, TableEffects* effects) {
  Store(std::move(request.keys[0]), std::move(request.values[0]), effects);
}

bool KvTable::Store(std::string&& key, Bytes&& value, TableEffects* effects) {
  // A value read in pieces may hold twice its size; the budget counts what is really held.
  if (value.size() >= kShrinkFrom && value.capacity() > value.size() + value.size() / 8) {
    value.shrink_to_fit();
  }
  auto it = data_.find(key);
  const uint64_t old_cost =
      it == data_.end() ? 0 : StoreBudget::EntryCost(key, it->second.capacity());
  const uint64_t new_cost = StoreBudget::EntryCost(key, value.capacity());
  if (new_cost > old_cost && !Fits(new_cost - old_cost)) {
    return Refuse("storing " + ByteSize(value.size()) + " at key " + QuotedKey(key), effects);
  }
  const bool created = it == data_.end();
  if (created) {
    key_bytes_ += key.size();
    it = data_.try_emplace(std::move(key)).first;
  }
  Recharge(old_cost, new_cost);
  // Watchers exist only for legacy WATCH_KEY; without them the old value is not worth a copy.
  if (watchers_.empty()) {
    it->second = std::move(value);
  } else {
    Bytes old = std::move(it->second);
    it->second = std::move(value);
    Notify(it->first, created ? kKeyCreated : kKeyUpdated, old, it->second, effects);
  }
  Touch(it->first, effects);
  return true;
}

// Always false, for `return Refuse(...)`.
bool KvTable::Refuse(std::string what, TableEffects* effects) {
  effects->error = std::move(what) + " would exceed " + budget_->Describe();
  effects->refused = true;
  effects->over_budget = true;
  return false;
}

void KvTable::Recharge(uint64_t old_cost, uint64_t new_cost) {
  budget_->RemoveStored(old_cost);
  budget_->AddStored(new_cost);
}

// Reference semantics, including its quirks: a missing key with a non-empty `expected` stores
// nothing and echoes `expected`. Waiters are woken only when something was written (the legacy
// server never wakes on COMPARE_SET, the libuv one always does; see docs/store_protocol.md).
void KvTable::CompareSet(Request& request, TableEffects* effects) {
  const std::string& key = request.keys[0];
  Bytes& expected = request.values[0];
  Bytes& desired = request.values[1];
  auto it = data_.find(key);
  if (it == data_.end() ? expected.empty() : it->second == expected) {
    EncodeBytes(desired, &effects->reply);
    if (!Store(std::move(request.keys[0]), std::move(desired), effects)) effects->reply.clear();
    return;
  }
  if (it == data_.end()) return EncodeBytes(expected, &effects->reply);
  EncodeBytes(it->second, &effects->reply);
}

void KvTable::Get(Request& request, TableEffects* effects) {
  auto it = data_.find(request.keys[0]);
  // An error closes the connection, as the legacy server does (libuv would answer an empty
  // value); PyTorch's clients send WAIT first and meet this only when racing a DELETE_KEY.
  if (it == data_.end()) {
    effects->error = "GET of missing key " + QuotedKey(request.keys[0]);
    return;
  }
  EncodeBytes(it->second, &effects->reply);
}

void KvTable::Add(Request& request, TableEffects* effects) {
  int64_t result = 0;
  if (!AddToCounter(request.keys[0], request.number, &result, effects)) return;
  EncodeI64(result, &effects->reply);
  Touch(request.keys[0], effects);
}

// old + delta, wrapping on overflow (the reference's signed overflow wraps in practice), stored
// as decimal text. False (with effects->error) when the stored value is not a number.
bool KvTable::AddToCounter(const std::string& key, int64_t delta, int64_t* result,
                           TableEffects* effects) {
  auto it = data_.find(key);
  int64_t old = 0;
  if (it != data_.end()) {
    auto parsed = ParseStoll(it->second);
    if (!parsed) {
      effects->error = "ADD on key " + QuotedKey(key) + " whose value is not a decimal integer";
      return false;
    }
    old = *parsed;
  }
  *result = static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(delta));
  Bytes text = std::to_string(*result);
  const uint64_t old_cost =
      it == data_.end() ? 0 : StoreBudget::EntryCost(key, it->second.capacity());
  const uint64_t new_cost = StoreBudget::EntryCost(key, text.capacity());
  if (new_cost > old_cost && !Fits(new_cost - old_cost)) {
    return Refuse("a counter at key " + QuotedKey(key), effects);
  }
  bool created = it == data_.end();
  if (created) {
    key_bytes_ += key.size();
    it = data_.try_emplace(key).first;
  }
  Recharge(old_cost, new_cost);
  if (watchers_.empty()) {
    it->second = std::move(text);
  } else {
    Bytes previous = std::exchange(it->second, std::move(text));
    Notify(key, created ? kKeyCreated : kKeyUpdated, previous, it->second, effects);
  }
  return true;
}

void KvTable::DeleteKey(Request& request, TableEffects* effects) {
  if (data_.find(request.keys[0]) == data_.end()) return EncodeI64(0, &effects->reply);
  EncodeI64(1, &effects->reply);
  Erase(request.keys[0], effects);
}

// Removes a present key (DELETE_KEY, an owner's close): no wake-ups, KEY_DELETED to watchers.
void KvTable::Erase(std::string_view key, TableEffects* effects) {
  auto it = data_.find(key);
  if (it == data_.end()) return;
  owners_.Release(key);
  budget_->RemoveStored(StoreBudget::EntryCost(it->first, it->second.capacity()));
  key_bytes_ -= it->first.size();
  if (watchers_.empty()) {
    data_.erase(it);
    return;
  }
  // `key` may view the erased entry's own string.
  std::string name = it->first;
  Bytes old = std::move(it->second);
  data_.erase(it);
  Notify(name, kKeyDeleted, old, {}, effects);
}

int64_t KvTable::Clear(TableEffects* effects) {
  const auto count = static_cast<int64_t>(data_.size() + queues_.size());
  // Only watched keys need a notice; walking the watchers keeps this O(watched keys).
  for (const auto& entry : watchers_) {
    auto it = data_.find(entry.first);
    if (it != data_.end()) Notify(it->first, kKeyDeleted, it->second, {}, effects);
  }
  // Set aside rather than cleared: the new maps start small, and the old ones are freed in slices.
  cleared_keys_.push_back(std::exchange(data_, {}));
  cleared_queues_.push_back(std::exchange(queues_, {}));
  key_bytes_ = 0;
  owners_.ReleaseAll();
  return count;
}

// The budget is given back as the memory is: entry by entry, at the costs Store and QueuePush
// charged.
bool KvTable::ReleaseSome(size_t max_entries) {
  auto release = [&max_entries](auto& maps, auto cost) {
    while (!maps.empty() && max_entries > 0) {
      auto& map = maps.back();
      // erase(begin()) is O(1): the nodes form one list that begin() heads.
      for (; !map.empty() && max_entries > 0; --max_entries) {
        cost(*map.begin());
        map.erase(map.begin());
      }
      if (map.empty()) maps.pop_back();
    }
  };
  release(cleared_keys_, [this](const auto& entry) {
    budget_->RemoveStored(StoreBudget::EntryCost(entry.first, entry.second.capacity()));
  });
  release(cleared_queues_, [this](const auto& entry) {
    budget_->RemoveStored(entry.first.size());
    for (const Bytes& item : entry.second) {
      budget_->RemoveStored(StoreBudget::EntryCost({}, item.capacity()));
    }
  });
  if (sweeping_) SweepSome(max_entries);
  return releasing();
}

void KvTable::Append(Request& request, TableEffects* effects) {
  const std::string& key = request.keys[0];
  auto it = data_.find(key);
  const uint64_t old_cost =
      it == data_.end() ? 0 : StoreBudget::EntryCost(key, it->second.capacity());
  const uint64_t old_size = it == data_.end() ? 0 : it->second.size();
  // Checked at the size it will have; the string's spare capacity is charged after the append.
  if (!Fits(StoreBudget::EntryCost(key, old_size + request.values[0].size()) -
            std::min(old_cost, StoreBudget::EntryCost(key, old_size)))) {
    Refuse("appending " + ByteSize(request.values[0].size()) + " to key " + QuotedKey(key),
           effects);
    return;
  }
  const bool created = it == data_.end();
  if (created) {
    key_bytes_ += key.size();
    it = data_.try_emplace(std::move(request.keys[0])).first;
  }
  if (watchers_.empty()) {
    it->second.append(request.values[0]);
  } else {
    Bytes old = it->second;
    it->second.append(request.values[0]);
    Notify(it->first, created ? kKeyCreated : kKeyUpdated, old, it->second, effects);
  }
  Recharge(old_cost, StoreBudget::EntryCost(it->first, it->second.capacity()));
  Touch(it->first, effects);
}

// Always answers WAIT_CANCELED. A STOP_WAITING produced earlier was already handed to the
// server, so it goes out first, which is the order the reference clients expect.
void KvTable::CancelWait(ConnId conn, TableEffects* effects) {
  DropWait(conn);
  EncodeU8(kWaitCanceled, &effects->reply);
}

// A repeated watch of one key by one connection counts once (the reference would notify it once
// per registration, which 2,000 registrations and one big SET turn into gigabytes).
void KvTable::WatchKey(ConnId conn, Request& request, TableEffects* effects) {
  std::vector<ConnId>& watchers = watchers_[request.keys[0]];
  if (std::find(watchers.begin(), watchers.end(), conn) == watchers.end()) {
    std::vector<std::string>& keys = watched_[conn];
    const uint64_t cap = budget_->limits().max_watches_per_connection;
    if (keys.size() >= cap) {
      if (watchers.empty()) watchers_.erase(request.keys[0]);
      effects->error = "watching more than " + std::to_string(cap) +
                       " keys on one connection (the store's limit)";
      effects->refused = true;
      return;
    }
    watchers.push_back(conn);
    keys.push_back(request.keys[0]);
  }
  EncodeU8(kKeyCallbackRegistered, &effects->reply);
}

void KvTable::QueuePush(Request& request, TableEffects* effects) {
  const uint64_t cost = StoreBudget::EntryCost({}, request.values[0].capacity());
  if (!Fits(cost + request.keys[0].size())) {
    Refuse(
        "pushing " + ByteSize(request.values[0].size()) + " to queue " + QuotedKey(request.keys[0]),
        effects);
    return;
  }
  auto it = queues_.find(request.keys[0]);
  if (it == queues_.end()) {
    it = queues_.try_emplace(request.keys[0]).first;
    budget_->AddStored(it->first.size());
  }
  budget_->AddStored(cost);
  it->second.push_back(std::move(request.values[0]));
  WakeOne(it->first, effects);
}

void KvTable::QueuePop(Request& request, TableEffects* effects) {
  auto it = queues_.find(request.keys[0]);
  if (it == queues_.end()) return EncodeI64(0, &effects->reply);
  EncodeI64(static_cast<int64_t>(it->second.size()), &effects->reply);
  EncodeBytes(it->second.front(), &effects->reply);
  budget_->RemoveStored(StoreBudget::EntryCost({}, it->second.front().capacity()));
  it->second.pop_front();
  // An empty queue must stop counting as present for WAIT and CHECK.
  if (it->second.empty()) {
    budget_->RemoveStored(it->first.size());
    queues_.erase(it);
  }
}

void KvTable::QueueLen(Request& request, TableEffects* effects) {
  auto it = queues_.find(request.keys[0]);
  EncodeI64(it == queues_.end() ? 0 : static_cast<int64_t>(it->second.size()), &effects->reply);
}

// Sized before it is built: a count, then each key with its length.
void KvTable::ListKeys(TableEffects* effects) {
  const uint64_t size = 8 + 8 * uint64_t{data_.size()} + key_bytes_;
  if (size > budget_->limits().max_reply_bytes) {
    effects->error = "a key list of " + ByteSize(size) + " (" + std::to_string(data_.size()) +
                     " keys) is over the store's reply limit of " +
                     ByteSize(budget_->limits().max_reply_bytes);
    effects->refused = true;
    return;
  }
  effects->reply.reserve(size);
  EncodeI64(static_cast<int64_t>(data_.size()), &effects->reply);
  for (const auto& entry : data_) EncodeBytes(entry.first, &effects->reply);
}

// The counter at the key counts arrivals; the arrival that reaches world_size is answered at
// once and wakes the earlier ones, which wait as an ordinary one-key waiter.
void KvTable::Barrier(ConnId conn, Request& request, TableEffects* effects) {
  int64_t arrived = 0;
  if (!AddToCounter(request.keys[0], 1, &arrived, effects)) return;
  if (arrived < request.number) {
    DropWait(conn);
    Waiter& waiter = WaiterOf(conn);
    waiter.ticket = next_ticket_++;
    waiter.remaining = 0;
    waiter.held = 0;
    if (!Register(conn, request.keys[0], waiter, effects)) return DropWait(conn);
    return;
  }
  EncodeU8(kStopWaiting, &effects->reply);
  Touch(request.keys[0], effects);
}

// ---- Waits

bool KvTable::Present(std::string_view key) const {
  return data_.find(key) != data_.end() || queues_.find(key) != queues_.end();
}

KvTable::Waiter& KvTable::WaiterOf(ConnId conn) {
  if (conn >= waiters_.size()) waiters_.resize(size_t{conn} + 1);
  return waiters_[conn];
}

// Registers `conn`'s wait on `key` (not present) unless the budget or the connection's share
// refuses (false, effects->error set).
bool KvTable::Register(ConnId conn, const std::string& key, Waiter& waiter, TableEffects* effects) {
  auto& shard = waiting_.ShardOf(key);
  auto it = shard.find(key);
  const uint64_t cost = kWaitEntryCost + (it == shard.end() ? WaitKeyCost(key) : 0);
  const uint64_t share = budget_->limits().max_connection_bytes;
  if (waiter.held + cost > share) {
    effects->error = "a wait of more than " + ByteSize(share) +
                     " of registrations is over the store's limit per connection";
    effects->refused = true;
    return false;
  }
  if (!Fits(cost)) return Refuse("registering a wait on key " + QuotedKey(key), effects);
  if (it == shard.end()) it = shard.try_emplace(key).first;
  it->second.push_back({conn, waiter.ticket});
  budget_->AddHeld(cost);
  waiter.held += cost;
  ++waiter.remaining;
  ++total_entries_;
  return true;
}

void KvTable::Touch(std::string_view key, TableEffects* effects) {
  if (total_entries_ == 0) return;
  auto& shard = waiting_.ShardOf(key);
  auto it = shard.find(key);
  if (it == shard.end()) return;
  std::vector<WaitEntry> entries = std::move(it->second);
  budget_->RemoveHeld(WaitKeyCost(it->first));
  shard.erase(it);
  ReleaseEntries(entries.size());
  total_entries_ -= entries.size();
  for (const auto& entry : entries) CountTouch(entry, effects);
}

// One touch of a key a waiter waits on: the waiter is woken when it was its last missing key.
// Returns false for a stale entry (its WAIT was answered, cancelled or replaced).
bool KvTable::CountTouch(const WaitEntry& entry, TableEffects* effects) {
  Waiter& waiter = waiters_[entry.conn];
  if (waiter.ticket != entry.ticket) {
    --stale_entries_;
    return false;
  }
  if (--waiter.remaining == 0) {
    waiter.ticket = 0;
    effects->woken.push_back(entry.conn);
  }
  return true;
}

// QUEUE_PUSH wakes only the oldest live waiter on the key.
void KvTable::WakeOne(std::string_view key, TableEffects* effects) {
  auto& shard = waiting_.ShardOf(key);
  auto it = shard.find(key);
  if (it == shard.end()) return;
  auto& entries = it->second;
  size_t used = 0;
  while (used < entries.size() && !CountTouch(entries[used++], effects)) {
  }
  entries.erase(entries.begin(), entries.begin() + static_cast<ptrdiff_t>(used));
  total_entries_ -= used;
  ReleaseEntries(used);
  if (entries.empty()) {
    budget_->RemoveHeld(WaitKeyCost(it->first));
    shard.erase(it);
  }
}

void KvTable::DropWait(ConnId conn) {
  if (conn >= waiters_.size() || waiters_[conn].ticket == 0) return;
  stale_entries_ += waiters_[conn].remaining;
  waiters_[conn] = Waiter{};
  StartSweep();
}

void KvTable::Disconnect(ConnId conn, TableEffects* effects) {
  DropLong(conn);
  DropWait(conn);
  auto watched = watched_.find(conn);
  if (watched != watched_.end()) {
    for (const auto& key : watched->second) {
      auto it = watchers_.find(key);
      if (it == watchers_.end()) continue;
      std::erase(it->second, conn);
      if (it->second.empty()) watchers_.erase(it);
    }
    watched_.erase(watched);
  }
  TableEffects scratch;
  if (effects == nullptr) effects = &scratch;
  effects->Clear();
  // Owned keys first, so that a will may name a key its own connection owned.
  for (const auto& key : owners_.TakeOwned(conn)) Erase(key, effects);
  budget_->RemoveStored(owners_.WillsCost(conn));
  for (auto& [key, value] : owners_.TakeWills(conn)) {
    // A will the budget refuses is dropped; the connection is gone anyway.
    if (!Present(key)) Store(std::move(key), std::move(value), effects);
  }
  effects->error.clear();
}

// ---- Legacy watch notifications

void KvTable::Notify(std::string_view key, uint8_t type, std::string_view old_value,
                     std::string_view new_value, TableEffects* effects) {
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  // Sized before it is built, and built once: the server queues it to each watcher, charging
  // the budget per copy (a watcher it does not fit is closed there).
  TableEffects::Notice notice{
      it->second, {}, 25 + key.size() + old_value.size() + new_value.size()};
  if (budget_->CanQueue(notice.size)) {
    notice.bytes.reserve(notice.size);
    EncodeWatchEvent(type, key, old_value, new_value, &notice.bytes);
  }
  effects->notices.push_back(std::move(notice));
}

}  // namespace cpplaunch
