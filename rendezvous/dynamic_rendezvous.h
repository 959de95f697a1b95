#pragma once
// torchrun's c10d rendezvous (--rdzv-backend=c10d --rdzv-endpoint=H:P --rdzv-id=ID
// --nnodes=MIN:MAX, and --standalone) between cpplaunch agents: the join algorithm of
// rendezvous_state.h driven against the store at H:P. The state is one key updated by
// COMPARE_SET; after each successful write the writer sets a "version" key, and waiting agents
// hold a WAIT on the next version's key, so they react in milliseconds, without polling
// (participants of an incomplete round on the next epoch's key: rendezvous_state.h). Hosts about
// to write queue for a turn (a ticket counter), so that simultaneous arrivals do not fail each
// other's writes.
// Each node holds a liveness key owned by its connection; the write that completes a round first
// removes participants whose liveness key is gone (they died while the round waited), and the
// members then arm the round (rendezvous.h).
//
// Threads: Next()/Close() on the executor's thread; one call at a time.

#include <boost/asio/any_io_executor.hpp>

#include "rendezvous/rendezvous.h"
#include "rendezvous/rendezvous_state.h"
#include "rendezvous/store/async_store_client.h"

namespace cpplaunch {

class DynamicRendezvous : public Rendezvous {
 public:
  DynamicRendezvous(boost::asio::any_io_executor executor, RendezvousSettings settings);

  // Completes at MAX at once, at MIN after last_call_timeout; waits at most join_timeout
  // (connecting included), then leaves the round and throws RendezvousError. A host arriving
  // at a running job joins the wait list and ends the running round (membership change).
  Task<RendezvousResult> Next(std::optional<RoundTransition> previous) override;
  // Closes the rendezvous: hosts that arrive later fail with `reason`.
  Task<void> Close(std::string reason) override;
  Task<void> Disarm() override;
  void Cancel() override { client_.Close(); }
  AsyncStoreClient* connection() override { return &client_; }

 private:
  struct Snapshot {
    std::optional<RendezvousState> state;
    Bytes raw;  // the stored value: the COMPARE_SET fencing token ("" = no state yet)
  };
  using Clock = AsyncStoreClient::Clock;

  // The steps of Next().
  Task<void> PublishSelf();
  // The write turn (see the .cpp): TakeTurn returns this host's ticket once its predecessor
  // wrote (or once the queue stood still for kTurnWait per place in it); PassTurn lets the next
  // ticket's holder write.
  static constexpr int64_t kNoTurn = 0;
  static constexpr int64_t kTurnPassed = -1;
  static constexpr std::chrono::milliseconds kTurnWait{1000};
  Task<int64_t> TakeTurn(Clock::time_point deadline);
  Task<int64_t> PassTurn(int64_t ticket);
  JoinRequest JoinRequestFor(const std::optional<RoundTransition>& previous) const;
  // Closes the rendezvous with the mismatch and tells a running round; always throws.
  Task<void> RefuseMismatch(Snapshot* snapshot, const JoinDecision& decision);
  RendezvousError TimeoutError(const Snapshot& snapshot, Clock::time_point started) const;
  Task<void> WaitForNews(const Snapshot& snapshot, const JoinDecision& decision,
                         Clock::time_point deadline);

  Task<Snapshot> Read();
  // COMPARE_SET, then WakeWaiters; returns true when `next` was stored. Refreshes *snapshot
  // either way.
  Task<bool> Write(Snapshot* snapshot, const RendezvousState& next);
  Task<bool> CompareAndSwap(Snapshot* snapshot, const RendezvousState& next);
  // Sets the keys the waiters of the state before `next` wait for.
  Task<void> WakeWaiters(int64_t epoch_before, const RendezvousState& next);
  Task<void> WaitForChange(const Snapshot& snapshot, AsyncStoreClient::Clock::time_point until);
  Task<bool> DropDeadParticipants(Snapshot* snapshot, const RendezvousState& next);
  Task<void> AnnounceWaiting(const RendezvousState& state);
  Task<void> Leave(Snapshot snapshot);
  Task<RendezvousResult> Finish(const RendezvousState& state, int rank,
                                AsyncStoreClient::Clock::time_point deadline);
  void ReportProgress(const RendezvousState& state, AsyncStoreClient::Clock::time_point deadline);
  std::string StateKey() const;
  std::string VersionKey(int64_t version) const;
  std::string EpochKey(int64_t epoch) const;
  std::string TicketKey() const;
  std::string TurnKey(int64_t ticket) const;
  std::string PassedKey() const;  // how many turns were passed
  std::string NodeKey(const std::string& node_id) const;
  std::string AliveKey(const std::string& node_id) const;  // owned by the node's connection

  RendezvousSettings settings_;
  AsyncStoreClient client_;
  bool published_ = false;
  AsyncStoreClient::Clock::time_point next_progress_{};
};

}  // namespace cpplaunch
