#pragma once
// torchrun's c10d rendezvous (--rdzv-backend=c10d --rdzv-endpoint=H:P --rdzv-id=ID
// --nnodes=MIN:MAX, and --standalone) between cpplaunch agents: the join algorithm of
// rendezvous_state.h driven against the store at H:P. The state is one key updated by
// COMPARE_SET; after each successful write the writer sets a "version" key, and waiting agents
// hold a WAIT on the next version's key, so they react in milliseconds, without polling
// (participants of an incomplete round on the next epoch's key: rendezvous_state.h). Hosts about
// to write queue for a turn (a ticket counter), so that simultaneous arrivals do not fail each
// other's writes. Before that, a host tries the join queue (join_queue.h): it appends its request,
// and whichever host holds the admission role applies every queued request in one write; hosts
// that arrive together then cost a few writes of the state, not one each.
// Each node holds a liveness key owned by its connection; the write that completes a round first
// removes participants whose liveness key is gone (they died while the round waited). The writer
// of the complete state then stores each member's assignment (round_assignment.h) under the
// member's own key before it wakes the waiters, and each member reads only its own, so that the
// end of a round costs O(N log N) bytes for the job rather than N^2. The members then arm the
// round (rendezvous.h).
//
// Threads: Next()/Close() on the executor's thread; one call at a time.

#include <boost/asio/any_io_executor.hpp>

#include "rendezvous/core/join_queue.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/core/round_assignment.h"
#include "rendezvous/store/client/async_store_client.h"

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
  // The join queue: returns the round when this node was admitted and the round completed
  // without anything else to decide; nullopt when the DecideJoin loop must take over.
  Task<std::optional<RendezvousResult>> JoinThroughQueue(const JoinRequest& me,
                                                         Clock::time_point deadline);
  // Takes the admission role if it is free, applies the queue until it is drained, and releases
  // the role; returns at once when another host holds it.
  Task<void> Admit();
  Task<void> AdmitQueued();
  // How long a queued host waits for its answer before it looks at the admission role again
  // (its holder may have died: the role is a key owned by the holder's connection).
  static constexpr std::chrono::milliseconds kAnswerWait{1000};
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
  // The members' assignments of the complete `state`, published by whoever claims the round's
  // publisher key first (the completer, or, if it died before publishing, the first member that
  // stopped waiting for it).
  Task<void> PublishAssignments(const RendezvousState& state);
  // This node's assignment in complete round `round`, or nullopt when there is none (yet).
  Task<std::optional<RoundAssignment>> ReadAssignment(int64_t round);
  // Waits for this node's assignment in the complete `state`, publishing them all when nobody
  // did within kAssignmentWait.
  Task<RoundAssignment> AwaitAssignment(const RendezvousState& state, Clock::time_point deadline);
  Task<RendezvousResult> Finish(const RoundAssignment& assignment,
                                AsyncStoreClient::Clock::time_point deadline);
  static constexpr std::chrono::milliseconds kAssignmentWait{3000};
  // `joined`: the participants in all when `state` is a summary (StateSummary); -1: its list's.
  void ReportProgress(const RendezvousState& state, AsyncStoreClient::Clock::time_point deadline,
                      int joined = -1);
  std::string StateKey() const;
  std::string VersionKey(int64_t version) const;
  std::string EpochKey(int64_t epoch) const;
  std::string TicketKey() const;
  std::string TurnKey(int64_t ticket) const;
  std::string PassedKey() const;  // how many turns were passed
  std::string NodeKey(const std::string& node_id) const;
  std::string AliveKey(const std::string& node_id) const;  // owned by the node's connection
  std::string AssignKey(int64_t round, const std::string& node_id) const;
  std::string QueueKey() const;
  std::string SummaryKey() const;        // the state without its lists, as of the latest epoch
  std::string QueuedCountKey() const;    // lines appended to the queue
  std::string AdmittedCountKey() const;  // lines applied (as last written)
  std::string AdmitterKey() const;       // owned by the admitting host's connection
  std::string AnswerKey(const std::string& node_id, int64_t attempt) const;
  std::string PublisherKey(int64_t round) const;

  RendezvousSettings settings_;
  AsyncStoreClient client_;
  bool published_ = false;
  int64_t attempts_ = 0;  // calls of Next(): numbers this node's queued joins
  AsyncStoreClient::Clock::time_point next_progress_{};
};

}  // namespace cpplaunch
