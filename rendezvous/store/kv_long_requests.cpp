// KvTable's long requests: CHECK, WAIT, MULTI_GET and MULTI_SET name up to 131,072 keys (and
// MULTI_GET may answer with gigabytes), which is tens of milliseconds of work in one go. They
// are applied in slices of a few thousand keys or a few MiB, so the server's loop can run
// other connections, supervision and timers in between. A request that fits one slice, the
// usual case, is answered at once exactly as before.
//
// What slicing changes: a long request is not atomic with respect to other connections' writes
// between its slices (a MULTI_GET may see a value written meanwhile; a MULTI_SET becomes
// visible in parts). Limits are still checked before anything is built: MULTI_GET finds and
// sizes every key before it sends a byte, MULTI_SET checks the budget for all its pairs before
// it stores one.

#include <algorithm>

#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/wire/reply_codec.h"

namespace cpplaunch {
namespace {

// Well under a millisecond of work each: keys looked up, and bytes copied.
constexpr size_t kSliceKeys = 4096;
constexpr uint64_t kSliceBytes = uint64_t{1024} * 1024;

}  // namespace

// A request kept between slices stays in the budget: the server held its bytes while they
// arrived and gives them over here (unchecked: they were counted a moment ago).
void KvTable::StartLong(ConnId conn, Request& request, TableEffects* effects) {
  Cursor cursor;
  if (Slice(conn, request, cursor, effects)) return;
  cursor.held = HeldCost(request, request.command == Command::kMultiSet ? cursor.next : 0);
  budget_->AddHeld(cursor.held);
  long_.insert_or_assign(conn, LongRequest{std::move(request), cursor});
  effects->more = true;
}

void KvTable::Continue(ConnId conn, TableEffects* effects) {
  effects->Clear();
  auto it = long_.find(conn);
  if (it == long_.end()) return;
  if (Slice(conn, it->second.request, it->second.cursor, effects)) {
    budget_->RemoveHeld(it->second.cursor.held);
    long_.erase(it);
  } else {
    effects->more = true;
  }
}

// The bytes a request holds (as FieldReader::held() counts them), from `first_pair` on for a
// MULTI_SET whose earlier pairs were moved into the table.
uint64_t KvTable::HeldCost(const Request& request, size_t first_pair) {
  uint64_t cost = 0;
  for (size_t i = first_pair; i < request.keys.size(); ++i) {
    cost += StoreBudget::kEntryOverhead + request.keys[i].capacity();
  }
  for (size_t i = first_pair; i < request.values.size(); ++i) {
    cost += StoreBudget::kEntryOverhead + request.values[i].capacity();
  }
  return cost;
}

bool KvTable::Slice(ConnId conn, Request& request, Cursor& cursor, TableEffects* effects) {
  switch (request.command) {
    case Command::kCheck:
      return CheckSlice(request, cursor, effects);
    case Command::kWait:
      return WaitSlice(conn, request, cursor, effects);
    case Command::kMultiGet:
      return MultiGetSlice(request, cursor, effects);
    case Command::kMultiSet:
      return MultiSetSlice(request, cursor, effects);
    default:
      return true;
  }
}

// A connection that closes mid-request: a WAIT being registered loses the bias that kept it
// from being woken early, so DropWait sees only real entries.
void KvTable::DropLong(ConnId conn) {
  auto it = long_.find(conn);
  if (it == long_.end()) return;
  if (it->second.request.command == Command::kWait && conn < waiters_.size() &&
      waiters_[conn].remaining > 0) {
    --waiters_[conn].remaining;
  }
  budget_->RemoveHeld(it->second.cursor.held);
  long_.erase(it);
}

bool KvTable::CheckSlice(const Request& request, Cursor& cursor, TableEffects* effects) {
  const size_t end = std::min(request.keys.size(), cursor.next + kSliceKeys);
  for (; cursor.next < end; ++cursor.next) {
    if (!Present(request.keys[cursor.next])) {
      EncodeU8(kCheckNotReady, &effects->reply);
      return true;
    }
  }
  if (cursor.next < request.keys.size()) return false;
  EncodeU8(kCheckReady, &effects->reply);
  return true;
}

// One counter per connection, as the reference: a second WAIT replaces a pending one (the
// reference would instead add to it; its clients never do either). While the keys are being
// registered the counter holds one extra count, so keys set between slices cannot wake the
// waiter before its last keys are registered.
bool KvTable::WaitSlice(ConnId conn, const Request& request, Cursor& cursor,
                        TableEffects* effects) {
  if (cursor.next == 0) {
    DropWait(conn);
    Waiter& waiter = WaiterOf(conn);
    waiter.ticket = next_ticket_++;
    waiter.remaining = 1;
    waiter.held = 0;
  }
  Waiter& waiter = waiters_[conn];
  const size_t end = std::min(request.keys.size(), cursor.next + kSliceKeys);
  for (; cursor.next < end; ++cursor.next) {
    const std::string& key = request.keys[cursor.next];
    if (Present(key)) continue;
    // Over the budget or the connection's share: the wait is refused and what it registered is
    // stale (swept with the rest), so its connection closes rather than works on.
    if (!Register(conn, key, waiter, effects)) {
      --waiter.remaining;  // the bias: not an entry
      DropWait(conn);
      return true;
    }
  }
  if (cursor.next < request.keys.size()) return false;
  if (--waiter.remaining == 0) {
    waiter.ticket = 0;
    EncodeU8(kStopWaiting, &effects->reply);
  }
  return true;
}

// All or nothing: a missing key fails the request as the legacy server does, and the size of
// the whole reply is checked before any of it is built. The reply is then built a slice at a
// time, a big value in pieces; the server asks for the next slice once the client has read the
// previous one, so a client that does not read holds about one slice.
bool KvTable::MultiGetSlice(const Request& request, Cursor& cursor, TableEffects* effects) {
  const uint64_t limit = budget_->limits().max_reply_bytes;
  size_t visits = 0;
  for (; !cursor.sized && visits < kSliceKeys; ++visits) {
    if (cursor.next == request.keys.size()) {
      cursor.sized = true;
      cursor.next = 0;
      break;
    }
    const std::string& key = request.keys[cursor.next++];
    auto it = data_.find(key);
    if (it == data_.end()) {
      effects->error = "MULTI_GET of missing key " + QuotedKey(key);
      return true;
    }
    cursor.reply_bytes += 8 + it->second.size();
    if (cursor.reply_bytes > limit) {
      effects->error = "a MULTI_GET reply of more than " + ByteSize(limit) + " (" +
                       std::to_string(request.keys.size()) +
                       " values) is over the store's reply limit";
      effects->refused = true;
      return true;
    }
  }
  if (!cursor.sized) return false;
  uint64_t copied = 0;
  for (; cursor.next < request.keys.size() && visits < kSliceKeys && copied < kSliceBytes;
       ++visits) {
    const std::string& key = request.keys[cursor.next];
    auto it = data_.find(key);
    // Deleted by another connection between two slices: the reply cannot be completed.
    if (it == data_.end()) {
      effects->error = "MULTI_GET of missing key " + QuotedKey(key);
      return true;
    }
    const Bytes& value = it->second;
    if (cursor.offset == 0) {
      EncodeU64(value.size(), &effects->reply);
      copied += 8;
      cursor.value = value.data();
    } else if (value.data() != cursor.value) {
      // A big value is sent in pieces; one replaced meanwhile lives in another buffer (the new
      // one was allocated while the old one was alive), and its pieces must not be mixed.
      effects->error = "MULTI_GET of key " + QuotedKey(key) + ", which changed while it was sent";
      return true;
    }
    const uint64_t take = std::min<uint64_t>(value.size() - cursor.offset, kSliceBytes - copied);
    effects->reply.append(value, cursor.offset, take);
    copied += take;
    cursor.offset += take;
    if (cursor.offset == value.size()) {
      cursor.offset = 0;
      ++cursor.next;
    }
  }
  return cursor.next == request.keys.size();
}

// The budget is checked for all pairs at once before any is stored (as if every key were new:
// a slight overestimate when some replace values), then the pairs are stored a slice at a time.
bool KvTable::MultiSetSlice(Request& request, Cursor& cursor, TableEffects* effects) {
  if (cursor.next == 0) {
    uint64_t total = 0;
    for (size_t i = 0; i < request.keys.size(); ++i) {
      total += StoreBudget::EntryCost(request.keys[i], request.values[i].size());
    }
    if (!budget_->CanStore(total)) {
      return !Refuse("a MULTI_SET of " + std::to_string(request.keys.size()) + " pairs (" +
                         ByteSize(total) + ")",
                     effects);
    }
  }
  const size_t end = std::min(request.keys.size(), cursor.next + kSliceKeys);
  uint64_t stored = 0;
  for (; cursor.next < end && stored < kSliceBytes; ++cursor.next) {
    stored += request.values[cursor.next].size();
    // The pair's bytes move into the table: stored from now on, no longer held.
    const uint64_t held = std::min(cursor.held, 2 * StoreBudget::kEntryOverhead +
                                                    request.keys[cursor.next].capacity() +
                                                    request.values[cursor.next].capacity());
    cursor.held -= held;
    budget_->RemoveHeld(held);
    if (!Store(std::move(request.keys[cursor.next]), std::move(request.values[cursor.next]),
               effects)) {
      return true;
    }
  }
  return cursor.next == request.keys.size();
}

}  // namespace cpplaunch
