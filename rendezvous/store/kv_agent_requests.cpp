// KvTable's agent-only commands (kv_table.h): CLAIM, WILL, CANCEL_WILLS and ARM, the keys and
// wills owned by an agent's connection (owner_table.h).

#include <utility>

#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/wire/reply_codec.h"

namespace cpplaunch {

// Creates `key` owned by `conn` unless it exists; the reply is the value now stored, so the
// caller compares it with its own to know whether it won.
void KvTable::Claim(ConnId conn, Request& request, TableEffects* effects) {
  auto it = data_.find(request.keys[0]);
  if (it != data_.end()) return EncodeBytes(it->second, &effects->reply);
  const std::string key = request.keys[0];
  EncodeBytes(request.values[0], &effects->reply);
  if (!Store(std::move(request.keys[0]), std::move(request.values[0]), effects)) {
    effects->reply.clear();  // refused by the budget: nothing stored, nothing owned
    return;
  }
  owners_.Own(conn, key);
}

// A will is held until its connection closes, so it is charged to the budget like a stored key;
// one that does not fit is refused like one over the count (the connection stays).
void KvTable::Will(ConnId conn, Request& request, TableEffects* effects) {
  const uint64_t before = owners_.WillsCost(conn);
  const uint64_t cost = StoreBudget::EntryCost(request.keys[0], request.values[0].capacity());
  bool added =
      Fits(cost) && owners_.AddWill(conn, std::move(request.keys[0]), std::move(request.values[0]));
  if (added) Recharge(before, owners_.WillsCost(conn));
  EncodeU8(added ? kAgentAccepted : kAgentRefused, &effects->reply);
}

void KvTable::CancelWills(ConnId conn, TableEffects* effects) {
  budget_->RemoveStored(owners_.WillsCost(conn));
  owners_.CancelWills(conn);
  EncodeU8(kAgentAccepted, &effects->reply);
}

// ARM's fields: keys {end, beat, armed, count, all_armed}, values {will}, number = the round's
// size (command_table.h). One request for what an agent arming a round would otherwise send as
// five, each a system call on both sides: the store's CPU per agent is mostly the kernel's.
void KvTable::Arm(ConnId conn, Request& request, TableEffects* effects) {
  if (request.keys.size() != 5 || request.values.size() != 1) {
    effects->error = "ARM needs 5 keys and 1 value";
    return;
  }
  budget_->RemoveStored(owners_.WillsCost(conn));
  owners_.CancelWills(conn);
  const uint64_t cost = StoreBudget::EntryCost(request.keys[0], request.values[0].capacity());
  if (!Fits(cost)) {
    Refuse(
        "a will of " + ByteSize(request.values[0].size()) + " at key " + QuotedKey(request.keys[0]),
        effects);
    return;
  }
  owners_.AddWill(conn, std::move(request.keys[0]), std::move(request.values[0]));
  budget_->AddStored(owners_.WillsCost(conn));
  int64_t beats = 0;
  int64_t armed = 0;
  if (!AddToCounter(request.keys[1], 1, &beats, effects)) return;
  if (!Store(std::move(request.keys[2]), Bytes(), effects)) return;
  if (!AddToCounter(request.keys[3], 1, &armed, effects)) return;
  if (armed == request.number && !Store(std::move(request.keys[4]), Bytes(), effects)) return;
  EncodeI64(armed, &effects->reply);
}

}  // namespace cpplaunch
