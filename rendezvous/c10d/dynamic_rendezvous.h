#pragma once
// torchrun's c10d rendezvous (--rdzv-backend=c10d --rdzv-endpoint=H:P --rdzv-id=ID
// --nnodes=MIN:MAX, and --standalone) between cpplaunch agents: the join algorithm of
// rendezvous_state.h driven against the store at H:P. The state is one key updated by
// COMPARE_SET (its keys: dynamic_keys.h); after each successful write the writer sets a "version"
// key, and waiting agents hold a WAIT on the next version's key, so they react in milliseconds,
// without polling (participants of an incomplete round on the next epoch's key:
// rendezvous_state.h). Two join paths, one after the other:
//   - the queued join (dynamic_rendezvous_queue.cpp): a host appends its request to the join
//     queue (join_queue.h), and whichever host holds the admission role applies every queued
//     request in one write; hosts that arrive together then cost a few writes of the state, not
//     one each;
//   - the decide-join loop (dynamic_rendezvous.cpp) for whatever the queue left to decide: the
//     steps of rendezvous_state.h's DecideJoin shared with the etcd backend (join_steps.h), each
//     write in its turn (write_turn.h), so that simultaneous arrivals do not fail each other's
//     writes.
// Each node holds a liveness key owned by its connection; the write that completes a round first
// removes participants whose liveness key is gone (they died while the round waited). The writer
// of the complete state then stores each member's assignment (round_assignment.h) under the
// member's own key before it wakes the waiters, and each member reads only its own, so that the
// end of a round costs O(N log N) bytes for the job rather than N^2. The members then arm the
// round (rendezvous.h); a member lost while the round arms (its connection closed, or its
// heartbeats stopped for the keep-alive window) is dropped: the next round is formed at once
// without it (ReformedWithout), without consuming a restart, and the others join that one.
// Hot spares (dynamic_rendezvous_replace.cpp): after a round that lost a host while a spare
// waits, the survivors do not join again. The first to claim the next round's former key writes
// that round once, complete, with the spare in the lost seat (ReplacementRound), publishes the
// assignments and says so; each survivor then reads its assignment and arms the round as usual.
// When that is not the case (no live spare, a second host gone, a host waiting to join) the
// former says so instead, and every survivor joins as before.

#include <boost/asio/any_io_executor.hpp>
#include <map>
#include <string>
#include <vector>

#include "rendezvous/c10d/dynamic_keys.h"
#include "rendezvous/core/join_queue.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/core/round_assignment.h"
#include "rendezvous/store/client/async_store_client.h"

namespace cpplaunch {

class DynamicRendezvous : public Rendezvous {
 public:
  DynamicRendezvous(const boost::asio::any_io_executor& executor, RendezvousSettings settings);

  // Completes at MAX at once, at MIN after last_call_timeout; waits at most join_timeout
  // (connecting included), then leaves the round and throws RendezvousError. A host arriving
  // at a running job joins the wait list and ends the running round (membership change).
  Task<RendezvousResult> Next(std::optional<RoundTransition> previous) override;
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
  // The queued join path (dynamic_rendezvous_queue.cpp): returns the round when this node was
  // admitted and the round completed without anything else to decide; nullopt when the DecideJoin
  // loop must take over.
  Task<std::optional<RendezvousResult>> JoinThroughQueue(const JoinRequest& me,
                                                         Clock::time_point deadline);
  // This queued join's answer (nullopt: none came before the deadline or while the admission
  // stood still for queue_timeout).
  Task<std::optional<JoinAnswer>> AwaitAnswer(const QueuedJoin& join, Clock::time_point deadline);
  // An admitted participant waits for its round's completion (the next epoch); nullopt when
  // anything else happened, for the DecideJoin loop to decide.
  Task<std::optional<RendezvousResult>> AwaitCompletion(const JoinAnswer& answer,
                                                        Clock::time_point deadline);
  // Takes the admission role if it is free, applies the queue until it is drained, and releases
  // the role; returns at once when another host holds it.
  Task<void> Admit();
  Task<void> AdmitQueued();
  // How long a queued host waits for its answer before it looks at the admission role again
  // (its holder may have died: the role is a key owned by the holder's connection).
  static constexpr std::chrono::milliseconds kAnswerWait{1000};
  // Closes the rendezvous with the mismatch and tells a running round; always throws.
  Task<void> RefuseMismatch(Snapshot* snapshot, const JoinDecision& decision);
  RendezvousError TimeoutError(const Snapshot& snapshot, Clock::time_point started) const;
  // A closed rendezvous, for a host that did not wait in it (a late one).
  RendezvousError ClosedError(const JoinDecision& decision) const;
  Task<void> WaitForNews(const Snapshot& snapshot, const JoinDecision& decision,
                         Clock::time_point deadline);

  Task<Snapshot> Read();
  // COMPARE_SET, then WakeWaiters; returns true when `next` was stored. Refreshes *snapshot
  // either way.
  Task<bool> Write(Snapshot* snapshot, const RendezvousState& next);
  // The same for a state whose writer also publishes a complete round's assignments
  // (PublishAssignments): after the COMPARE_SET, before the wake-up, so that the woken members
  // find theirs.
  Task<bool> WriteRound(Snapshot* snapshot, const RendezvousState& next);
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
  // Arms and releases the round; nullopt when a member was lost while the round armed and the
  // next round was formed without it (ReformAfterDrop): the join then decides again.
  Task<std::optional<RendezvousResult>> Finish(const RoundAssignment& assignment,
                                               AsyncStoreClient::Clock::time_point deadline);
  // Round `round` ended while it armed: true when its notice dropped a member (kMemberDropped),
  // after the next round was formed without it (by this host, or by another one first).
  Task<bool> ReformAfterDrop(int64_t round);
  static constexpr std::chrono::milliseconds kAssignmentWait{3000};
  // The hot-spare replacement: the round after a lost host (me.lost_seat >= 0) formed by one
  // survivor; nullopt at once when the previous round lost no host, and when the joins must form
  // the round, or it was formed again without a member lost while it armed (the join decides).
  Task<std::optional<RendezvousResult>> JoinReplacement(const JoinRequest& me,
                                                        Clock::time_point deadline);
  // The holder of the former role writes the replacement round, or nothing when the joins must
  // form it; either way it then sets the round's formed key.
  Task<void> FormReplacement(const JoinRequest& me);
  // Of `ids`, those whose liveness key is gone (one CHECK and one MULTI_GET while all live).
  Task<std::vector<std::string>> GoneAmong(const std::vector<std::string>& ids);
  // `joined`: the participants in all when `state` is a summary (StateSummary); -1: its list's.
  void ReportProgress(const RendezvousState& state, AsyncStoreClient::Clock::time_point deadline,
                      int joined = -1);

  RendezvousSettings settings_;
  AsyncStoreClient client_;
  DynamicKeys keys_;
  bool published_ = false;
  int64_t attempts_ = 0;  // calls of Next(): numbers this node's queued joins
  AsyncStoreClient::Clock::time_point next_progress_{};
  // The records of the last round's known peers by node id: a record never changes, so a later
  // round reads only those of peers it did not know (after a replacement, the spare's).
  std::map<std::string, NodeInfo, std::less<>> records_;
};

}  // namespace cpplaunch
