// StoreServerImpl's agent requests (store_server_impl.h): the handshake that admits a
// connection to the agents' namespace, and tagged WAITs, each in a wait slot of its own.

#include <exception>
#include <string>

#include "rendezvous/store/agent_handshake.h"
#include "rendezvous/store/store_server_impl.h"
#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/tag_framing.h"

namespace cpplaunch {
namespace {

// WAITs (and BARRIERs) one agent connection may have pending at once; a wait costs a table slot
// and its keys, so an agent cannot make the server hold them without bound.
constexpr size_t kMaxWaitsPerConnection = 4096;

}  // namespace

// An agent's WAIT runs in a slot of its own; the requests behind it go on being answered, and
// its reply goes out with its tag when the keys appear (WakeSlot) or it is cancelled.
void StoreServerImpl::StartTaggedWait(StoreSession& session, Request& request) {
  effects_.Clear();
  auto& waits = session.waits();
  if (waits.size() >= kMaxWaitsPerConnection || waits.count(request.tag) != 0) {
    effects_.refused = waits.size() >= kMaxWaitsPerConnection;
    effects_.error = effects_.refused
                         ? "more than " + std::to_string(kMaxWaitsPerConnection) +
                               " pending waits on one connection"
                         : "a second pending WAIT with tag " + std::to_string(request.tag);
    return;
  }
  const ConnId slot = NewId();
  slots_[slot] = WaitSlot{session.id(), request.tag};
  waits[request.tag] = slot;
  session.set_long_id(slot);
  agents_.Apply(slot, request, &effects_);
  if (!effects_.more && !agents_.waiting(slot)) ReleaseSlot(slot);  // answered (or failed)
}

// Answers the WAIT tagged `wait_tag` with WAIT_CANCELED (under its tag), then CANCEL_WAIT itself:
// WAIT_CANCELED when it cancelled that wait, STOP_WAITING when none was pending (answered).
void StoreServerImpl::CancelTaggedWait(StoreSession& session, uint32_t wait_tag) {
  effects_.Clear();
  auto it = session.waits().find(wait_tag);
  if (it == session.waits().end()) return EncodeU8(kStopWaiting, &effects_.reply);
  const ConnId slot = it->second;
  ReleaseSlot(slot);
  std::string canceled;
  EncodeTag(wait_tag, &canceled);
  EncodeU8(kWaitCanceled, &canceled);
  QueueTo(session.id(), std::string_view(canceled), "WAIT_CANCELED");
  EncodeU8(kWaitCanceled, &effects_.reply);
}

// Forgets a slot. Its id is reused only once no long request of its owner runs under it.
void StoreServerImpl::ReleaseSlot(ConnId slot) {
  const WaitSlot entry = slots_[slot];
  if (entry.owner == kNoOwner) return;
  agents_.Disconnect(slot);
  StoreSession* owner = sessions_[entry.owner].get();
  if (owner != nullptr) owner->waits().erase(entry.tag);
  if (owner != nullptr && owner->in_long() && owner->long_id() == slot) return;
  slots_[slot] = WaitSlot{};
  free_ids_.push_back(slot);
}

// A slot's wait was answered: STOP_WAITING under its tag.
void StoreServerImpl::WakeSlot(ConnId slot) {
  const WaitSlot entry = slots_[slot];
  ReleaseSlot(slot);
  std::string bytes;
  EncodeTag(entry.tag, &bytes);
  EncodeU8(kStopWaiting, &bytes);
  if (entry.owner >= sessions_.size() || !sessions_[entry.owner]) return;
  StoreSession& owner = *sessions_[entry.owner];
  // Inside a long request's reply (a MULTI_GET in slices) a tagged reply would split it.
  if (owner.in_long()) return owner.Hold(bytes);
  QueueTo(entry.owner, std::string_view(bytes), "a wake-up");
}

// The decoder enforces HELLO, then PROOF, then the rest; this answers them (agent_handshake.h).
bool StoreServerImpl::AgentHandshake(StoreSession& session, Request& request) {
  if (request.command == Command::kAgentHello) {
    const std::string& agent_nonce = request.values.at(0);
    if (request.u32 != kAgentHelloMagic || agent_nonce.size() != kAgentNonceBytes) return false;
    try {
      session.nonce() = NewAgentNonce();
    } catch (const std::exception& error) {
      Warn(refused_agents_, std::string("cannot make an agent handshake nonce: ") + error.what());
      return false;
    }
    // The store proves the secret first: the agent checks this before it trusts any answer.
    EncodeBytes(session.nonce() + StoreProof(options_.secret, agent_nonce, session.nonce()),
                &effects_.reply);
    return true;
  }
  const std::string& proof = request.values.at(0);
  const bool valid = AgentProofValid(options_.secret, session.nonce(), proof);
  session.nonce().clear();  // one proof per nonce
  EncodeU8(valid ? kAgentAccepted : kAgentRefused, &effects_.reply);
  if (!valid) {
    ++counters_.refused_handshakes;
    counters_.last_refused_peer = session.peer_address();
    // An empty proof: the agent could not verify this store's proof, so their secrets differ.
    Warn(refused_agents_, "refused an agent handshake from " + session.peer_address() +
                              (proof.empty() ? ": its secret differs from this store's"
                                             : ": wrong or missing secret") +
                              " (see docs/security.md)");
    return false;
  }
  session.set_agent();
  return true;
}

}  // namespace cpplaunch
