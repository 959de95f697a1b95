#include "rendezvous/c10d/dynamic_rendezvous.h"

#include <algorithm>

#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/c10d/write_turn.h"
#include "rendezvous/core/join_steps.h"
#include "rendezvous/core/quarantine.h"
#include "rendezvous/core/seats.h"

namespace cpplaunch {
namespace {

using Clock = AsyncStoreClient::Clock;

// COMPARE_SET with this `expected` never stores anything (no state can equal it), so its reply is
// the current value, or `expected` itself when the key is missing: a one-round-trip read.
const Bytes kAbsentProbe = std::string(
    "\x01"
    "absent");

}  // namespace

DynamicRendezvous::DynamicRendezvous(const boost::asio::any_io_executor& executor,
                                     RendezvousSettings settings)
    : settings_(std::move(settings)),
      client_(executor, AsyncStoreClient::Options::Agent(settings_.read_timeout, settings_.secret,
                                                         settings_.trace)),
      keys_(settings_.run_id) {}

// The decide-join path: what the join queue left to decide (dynamic_rendezvous_queue.cpp), decided
// by DecideJoin on the state as read, each write in its turn (write_turn.h).
Rendezvous::Task<RendezvousResult> DynamicRendezvous::Next(
    std::optional<RoundTransition> previous) {
  const auto started = Clock::now();
  // join_timeout, not timeout, bounds the join: torchrun's c10d backend ignores the generic key.
  const auto deadline = started + settings_.join_timeout;
  if (!client_.connected()) {
    co_await ConnectWithProgress(client_, settings_.store_host, settings_.store_port,
                                 settings_.self.Label(), deadline, settings_.progress_interval,
                                 settings_.progress, "--rdzv-conf join_timeout=SECONDS");
    CompleteSelf(client_, &settings_);
  }
  co_await PublishSelf();
  const JoinRequest me = JoinRequestFor(settings_, previous);
  next_progress_ = Clock::now() + settings_.progress_interval;
  std::optional<RendezvousResult> joined = co_await JoinReplacement(me, deadline);
  if (!joined) joined = co_await JoinThroughQueue(me, deadline);
  if (joined) co_return std::move(*joined);
  Snapshot snapshot;  // assume no state: the first write creates it or returns the real one
  WriteTurn turns(client_, keys_);
  int64_t turn = WriteTurn::kNoTurn;
  bool waited = false;  // this host waited for a place: a spare, when the job then finishes
  for (;;) {
    JoinDecision decision = DecideJoin(snapshot.state, me, WallMs());
    if (settings_.trace) settings_.trace("rendezvous: " + JoinStepLine(decision));
    switch (decision.action) {
      case JoinAction::kWrite: {
        if (turn == WriteTurn::kNoTurn) {  // queue up first, then decide again on the state then
          turn = co_await turns.Take(deadline);
          snapshot = co_await Read();
          break;
        }
        if (co_await DropDeadParticipants(&snapshot, decision.next)) break;
        const int64_t epoch_before = snapshot.state ? snapshot.state->epoch : 0;
        const bool wrote = co_await CompareAndSwap(&snapshot, decision.next);
        // The next host's turn comes first: the wake-ups below are off the queue's path.
        if (turn != WriteTurn::kTurnPassed) turn = co_await turns.Pass(turn);
        if (!wrote) break;
        // Before the wake-up: the woken members look for their assignments first.
        if (decision.next.complete) co_await PublishAssignments(decision.next);
        co_await WakeWaiters(epoch_before, decision.next);
        if (decision.next.IsWaiting(me.node_id)) co_await AnnounceWaiting(decision.next);
        break;
      }
      case JoinAction::kDone: {
        if (turn > 0) turn = co_await turns.Pass(turn);
        const RoundAssignment assignment = co_await AwaitAssignment(decision.next, deadline);
        if (auto result = co_await Finish(assignment, deadline)) co_return std::move(*result);
        snapshot = co_await Read();  // the round was formed again without a lost member
        break;
      }
      case JoinAction::kClosed:
        if (waited && decision.message == kJobFinished) throw NotNeeded(settings_);
        throw ClosedError(decision);
      case JoinAction::kQuarantined:
        throw SetAsideError(settings_, decision);
      case JoinAction::kMismatch:
        co_await RefuseMismatch(&snapshot, decision);  // throws
        break;
      case JoinAction::kWait:
        waited = true;
        if (turn > 0) turn = co_await turns.Pass(turn);
        if (Clock::now() >= deadline) {
          co_await Leave(snapshot);
          throw TimeoutError(snapshot, started);
        }
        co_await WaitForNews(snapshot, decision, deadline);
        // A waiting participant's round may have completed: its assignment is a few bytes, the
        // state holds every host.
        if (snapshot.state && !snapshot.state->complete &&
            snapshot.state->RankOf(me.node_id) >= 0) {
          const auto assignment = co_await ReadAssignment(snapshot.state->round);
          if (assignment) {
            if (auto result = co_await Finish(*assignment, deadline)) co_return std::move(*result);
          }
        }
        snapshot = co_await Read();
        break;
    }
  }
}
// The node record, the liveness key and the heartbeat counter exist before this node can be a
// participant: the others read every participant's record, the one completing a round checks
// every participant's liveness key, and the job channel counts a counter that never appears as
// a lost peer. The liveness key is owned by this connection: it vanishes when the agent dies. It
// is claimed again at every round, since a peer deletes it when this agent's heartbeats lapse
// (a frozen host), and node ids are unique per agent (CountNodeId checks it before the first
// publication), so the claim is always this agent's.
Rendezvous::Task<void> DynamicRendezvous::PublishSelf() {
  const NodeInfo& self = settings_.self;
  if (!published_) {
    co_await CountNodeId(client_, settings_, self.Label());
    std::vector<std::string> keys{keys_.Node(self.node_id),
                                  rendezvous_keys::Heartbeat(settings_.run_id, self.node_id)};
    std::vector<Bytes> values{self.Encode(), "0"};
    co_await client_.MultiSet(std::move(keys), std::move(values));
    published_ = true;
  }
  co_await client_.Claim(keys_.Alive(self.node_id), self.node_id);
}

// Before a write completes a round, its participants must be alive: one that died while the
// round waited (last call, or fewer than MIN) would be counted, and its peers would start
// workers that wait for its workers until the heartbeats find it. A participant whose liveness
// key is gone is removed instead, and the join decides again (the round may still complete
// without it, or wait for others). So must the spares a write that sets a host aside counts on
// (quarantine.h); a dead one goes silently. Returns true when it removed someone.
Rendezvous::Task<bool> DynamicRendezvous::DropDeadParticipants(Snapshot* snapshot,
                                                               const RendezvousState& next) {
  const std::vector<std::string> ids =
      NodesToConfirm(snapshot->state, next, settings_.self.node_id);
  if (ids.empty()) co_return false;
  const std::vector<std::string> gone = co_await GoneAmong(ids);
  if (gone.empty()) co_return false;
  for (const auto& id : gone) {
    if (settings_.progress && !IsSpare(next, id)) {
      settings_.progress(LeftBeforeCompletionLine(id, snapshot->state->round,
                                                  "its connection to the store closed"));
    }
  }
  co_await Write(snapshot, WithoutNodes(*snapshot->state, gone));
  co_return true;
}

Rendezvous::Task<std::vector<std::string>> DynamicRendezvous::GoneAmong(
    const std::vector<std::string>& ids) {
  std::vector<std::string> gone;
  if (ids.empty()) co_return gone;
  // Usually all are alive: one CHECK and one MULTI_GET for the whole round, not a read each.
  std::vector<std::string> alive_keys;
  alive_keys.reserve(ids.size());
  for (const auto& id : ids) alive_keys.push_back(keys_.Alive(id));
  if (co_await client_.Check(alive_keys)) {
    const std::vector<Bytes> holders = co_await client_.MultiGet(alive_keys);
    if (holders == ids) co_return gone;
  }
  for (const auto& id : ids) {
    // Named, not a temporary in the co_await expression: GCC 12 destroys those twice.
    RoundPeer member{0, NodeInfo{}, keys_.Alive(id)};
    member.node.node_id = id;
    if (!co_await MemberAlive(client_, member)) gone.push_back(id);
  }
  co_return gone;
}

// Closes the rendezvous with the mismatch and tells a running round (join_steps.h: RefusalOf).
Rendezvous::Task<void> DynamicRendezvous::RefuseMismatch(Snapshot* snapshot,
                                                         const JoinDecision& decision) {
  const Refusal refusal = RefusalOf(settings_.self, decision);
  co_await Write(snapshot, refusal.closed);
  if (refusal.notice) {
    co_await PublishRoundEnd(client_, settings_.run_id, decision.next.round, *refusal.notice);
  }
  throw RendezvousError(refusal.message);
}

RendezvousError DynamicRendezvous::ClosedError(const JoinDecision& decision) const {
  return RendezvousError("cannot join job '" + settings_.run_id + "' at the store " +
                         client_.peer() + " from " + settings_.self.Label() +
                         ": its rendezvous is closed (" + decision.message +
                         "); give the new job another --rdzv-id, or wait until the old job's " +
                         "store host has exited");
}

RendezvousError DynamicRendezvous::TimeoutError(const Snapshot& snapshot,
                                                Clock::time_point started) const {
  return RendezvousError("rendezvous of job '" + settings_.run_id + "' at the store " +
                         client_.peer() + " timed out on " + settings_.self.Label() + " " +
                         JoinTimeoutDetail(snapshot.state, Clock::now() - started,
                                           settings_.min_nodes, settings_.max_nodes));
}

// Waits for the state to change, for the decision's wake-up time (last call), or for the next
// progress line, whichever comes first; prints the progress line when it is due.
Rendezvous::Task<void> DynamicRendezvous::WaitForNews(const Snapshot& snapshot,
                                                      const JoinDecision& decision,
                                                      Clock::time_point deadline) {
  const auto until =
      WakeTime(deadline, next_progress_, decision.wake_at_ms, Clock::now(), WallMs());
  co_await WaitForChange(snapshot, until);
  if (Clock::now() >= next_progress_) {
    ReportProgress(decision.next, deadline);
    next_progress_ = Clock::now() + settings_.progress_interval;
  }
}

Rendezvous::Task<DynamicRendezvous::Snapshot> DynamicRendezvous::Read() {
  Bytes stored = co_await client_.CompareSet(keys_.State(), kAbsentProbe, kAbsentProbe + "!");
  Snapshot snapshot;
  if (stored == kAbsentProbe) co_return snapshot;
  std::string error;
  snapshot.state = RendezvousState::Decode(stored, &error);
  if (!snapshot.state) {
    throw RendezvousError("the store at " + client_.peer() + " holds an unreadable rendezvous " +
                          "state for job '" + settings_.run_id + "': " + error);
  }
  snapshot.raw = std::move(stored);
  co_return snapshot;
}

Rendezvous::Task<bool> DynamicRendezvous::Write(Snapshot* snapshot, const RendezvousState& next) {
  const int64_t epoch_before = snapshot->state ? snapshot->state->epoch : 0;
  if (!co_await CompareAndSwap(snapshot, next)) co_return false;
  co_await WakeWaiters(epoch_before, next);
  co_return true;
}

Rendezvous::Task<bool> DynamicRendezvous::WriteRound(Snapshot* snapshot,
                                                     const RendezvousState& next) {
  const int64_t epoch_before = snapshot->state ? snapshot->state->epoch : 0;
  if (!co_await CompareAndSwap(snapshot, next)) co_return false;
  if (next.complete) co_await PublishAssignments(next);
  co_await WakeWaiters(epoch_before, next);
  co_return true;
}

Rendezvous::Task<bool> DynamicRendezvous::CompareAndSwap(Snapshot* snapshot,
                                                         const RendezvousState& next) {
  Bytes desired = next.Encode();
  Bytes stored = co_await client_.CompareSet(keys_.State(), snapshot->raw, desired);
  if (stored == desired) {
    snapshot->state = next;
    snapshot->raw = std::move(desired);
    co_return true;
  }
  if (snapshot->raw.empty() && stored == snapshot->raw) {
    co_return false;  // cannot happen: an empty expected on a missing key creates it
  }
  std::string error;
  snapshot->state = RendezvousState::Decode(stored, &error);
  if (!snapshot->state) {
    throw RendezvousError("the store at " + client_.peer() + " holds an unreadable rendezvous " +
                          "state for job '" + settings_.run_id + "': " + error);
  }
  snapshot->raw = std::move(stored);
  co_return false;
}

// Wakes every agent waiting for this version (SET wakes waiters; COMPARE_SET may not), and the
// participants waiting for the next epoch when this write started one.
Rendezvous::Task<void> DynamicRendezvous::WakeWaiters(int64_t epoch_before,
                                                      const RendezvousState& next) {
  co_await client_.Set(keys_.Version(next.version), "");
  if (next.epoch == epoch_before) co_return;
  // The summary first: a participant woken by the epoch reads it, not the whole state.
  co_await client_.Set(keys_.Summary(), EncodeSummary(next));
  co_await client_.Set(keys_.Epoch(epoch_before + 1), "");
}

Rendezvous::Task<void> DynamicRendezvous::WaitForChange(const Snapshot& snapshot,
                                                        Clock::time_point until) {
  int64_t version = snapshot.state ? snapshot.state->version : 0;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  // A participant of an incomplete round sleeps through other hosts' joins (rendezvous_state.h,
  // epoch); everybody else reacts to every write.
  const bool participant = snapshot.state && !snapshot.state->complete &&
                           snapshot.state->RankOf(settings_.self.node_id) >= 0;
  std::vector<std::string> keys{participant ? keys_.Epoch(snapshot.state->epoch + 1)
                                            : keys_.Version(version + 1)};
  co_await client_.Wait(std::move(keys), std::max(left, std::chrono::milliseconds(1)));
}

// Ends the running round for the waiting host (join_steps.h: MembershipChangeNotice).
Rendezvous::Task<void> DynamicRendezvous::AnnounceWaiting(const RendezvousState& state) {
  const RoundEnd notice = MembershipChangeNotice(settings_.self, state);
  co_await PublishRoundEnd(client_, settings_.run_id, state.round, notice);
  if (settings_.progress) settings_.progress(RestartAskedLine(settings_.run_id, state));
}

Rendezvous::Task<void> DynamicRendezvous::Leave(Snapshot snapshot) {
  // Next() goes on with this object after Leave(): not when the rendezvous was destroyed meanwhile
  // (its client's operations then fail), so that failure is passed on, not swallowed.
  const auto closed = client_.ClosedProbe();
  try {
    for (int attempt = 0; attempt < 5 && snapshot.state; ++attempt) {
      const auto without = LeavingState(*snapshot.state, settings_.self.node_id);
      if (!without || co_await Write(&snapshot, *without)) co_return;
    }
  } catch (const std::exception&) {
    // Leaving is a courtesy to the others; the timeout error is what this host reports.
    if (closed()) throw;
  }
}

// One MULTI_GET of the N records and one MULTI_SET of N small values, once per round; the
// publisher key (owned by the claiming connection) keeps late members from repeating it, and
// frees itself if the publisher dies.
Rendezvous::Task<void> DynamicRendezvous::PublishAssignments(const RendezvousState& state) {
  const std::string& me = settings_.self.node_id;
  if (co_await client_.Claim(keys_.Publisher(state.round), me) != me) co_return;
  const std::vector<std::string> order = GroupOrder(state);  // by group rank (seats.h)
  std::vector<std::string> keys;
  keys.reserve(order.size());
  for (const auto& id : order) keys.push_back(keys_.Node(id));
  std::vector<int> local_world_sizes;
  for (const Bytes& value : co_await client_.MultiGet(std::move(keys))) {
    std::string error;
    auto node = NodeInfo::Decode(value, &error);
    if (!node) throw RendezvousError("unreadable node info in the store: " + error);
    local_world_sizes.push_back(node->local_world_size);
  }
  std::vector<RoundAssignment> all = AssignRound(state, local_world_sizes);
  std::vector<std::string> assign_keys;
  std::vector<Bytes> values;
  for (const RoundAssignment& assignment : all) {
    assign_keys.push_back(keys_.Assign(state.round, order[assignment.group_rank]));
    values.push_back(assignment.Encode());
  }
  co_await client_.MultiSet(std::move(assign_keys), std::move(values));
}

Rendezvous::Task<std::optional<RoundAssignment>> DynamicRendezvous::ReadAssignment(int64_t round) {
  const auto stored = co_await ReadIfPresent(client_, keys_.Assign(round, settings_.self.node_id));
  if (!stored) co_return std::nullopt;
  std::string error;
  auto assignment = RoundAssignment::Decode(*stored, &error);
  if (!assignment || assignment->round != round) {
    throw RendezvousError(
        "the store at " + client_.peer() + " holds an unreadable assignment " + "for round " +
        std::to_string(round) + " of job '" + settings_.run_id +
        "': " + (assignment ? "it names round " + std::to_string(assignment->round) : error));
  }
  co_return assignment;
}

Rendezvous::Task<RoundAssignment> DynamicRendezvous::AwaitAssignment(const RendezvousState& state,
                                                                     Clock::time_point deadline) {
  for (;;) {
    std::vector<std::string> keys{keys_.Assign(state.round, settings_.self.node_id)};
    const bool published = co_await client_.Wait(std::move(keys), kAssignmentWait);
    auto assignment = co_await ReadAssignment(state.round);
    if (assignment) co_return *assignment;
    if (published) continue;  // cannot happen: a published assignment is never deleted
    if (Clock::now() >= deadline) {
      throw RendezvousError("round " + std::to_string(state.round) + " of job '" +
                            settings_.run_id + "' completed, but no host published its ranks");
    }
    co_await PublishAssignments(state);  // the completer died before it published them
  }
}

Rendezvous::Task<std::optional<RendezvousResult>> DynamicRendezvous::Finish(
    const RoundAssignment& assignment, Clock::time_point deadline) {
  // Only the records this host does not hold from the last round: none for most survivors of
  // a replacement (the same peers), the spare's for those that know the lost seat.
  std::vector<std::string> unread;
  for (const auto& [rank, id] : assignment.peers) {
    if (!records_.contains(id)) unread.push_back(id);
  }
  RendezvousResult result = ResultWithoutMembers(assignment);
  result.master_addr = settings_.master_addr;
  result.master_port = settings_.master_port;
  std::map<std::string, NodeInfo, std::less<>> records;
  if (!unread.empty()) {
    std::vector<std::string> keys;
    keys.reserve(unread.size());
    for (const auto& id : unread) keys.push_back(keys_.Node(id));
    std::vector<Bytes> values = co_await client_.MultiGet(std::move(keys));
    for (size_t i = 0; i < values.size(); ++i) {
      std::string error;
      auto node = NodeInfo::Decode(values[i], &error);
      if (!node) throw RendezvousError("unreadable node info in the store: " + error);
      if (node->node_id != unread[i]) {
        throw RendezvousError("the store's record of node " + unread[i] + " names " +
                              node->node_id);
      }
      records.emplace(unread[i], std::move(*node));
    }
  }
  for (const auto& [rank, id] : assignment.peers) {
    auto known = records_.find(id);
    if (known != records_.end()) records.emplace(id, known->second);
    result.members.push_back(RoundPeer{rank, records.at(id), keys_.Alive(id)});
  }
  records_ = std::move(records);
  if (result.self().node_id != settings_.self.node_id) {
    throw RendezvousError("round " + std::to_string(result.round) + " of job '" + settings_.run_id +
                          "' gave this host's place to " + result.self().node_id);
  }
  const std::string round_text =
      "round " + std::to_string(result.round) + " of job '" + settings_.run_id + "'";
  ArmWatch watch;
  watch.round_text = round_text;
  watch.silent_limit =
      settings_.keep_alive_interval * std::max(settings_.keep_alive_max_attempt, 1);
  watch.beat_interval = std::max<std::chrono::milliseconds>(settings_.keep_alive_interval / 4,
                                                            std::chrono::milliseconds(10));
  watch.lost_kind = RoundEndKind::kMemberDropped;
  watch.progress_interval = settings_.progress_interval;
  watch.progress = settings_.progress;
  const ArmOutcome armed =
      co_await ArmRound(client_, settings_.run_id, result, deadline,
                        round_text + ": not every host armed the round", watch);
  if (armed == ArmOutcome::kEnded && co_await ReformAfterDrop(result.round)) co_return std::nullopt;
  co_await ReleaseRound(client_, settings_.run_id, result.round, result.group_rank, deadline,
                        settings_.progress_interval,
                        round_text + ": group rank 0 did not release the round");
  co_return result;
}

// Every member that saw the drop notice tries the same write: the first one forms the next round,
// and the others find the state moved on. The dropped member's record stays (it may wake up and
// join again as a late host).
Rendezvous::Task<bool> DynamicRendezvous::ReformAfterDrop(int64_t round) {
  const auto stored = co_await ReadIfPresent(client_, EndKey(settings_.run_id, round));
  std::string error;
  const auto notice = stored ? RoundEnd::Decode(*stored, &error) : std::nullopt;
  if (!notice || notice->kind != RoundEndKind::kMemberDropped) co_return false;
  if (settings_.progress) {
    settings_.progress("round " + std::to_string(round) + " of job '" + settings_.run_id +
                       "': " + notice->Describe() + "; forming round " + std::to_string(round + 1) +
                       " without it");
  }
  for (;;) {
    Snapshot snapshot = co_await Read();
    const auto& state = snapshot.state;
    if (!state || state->round != round || !state->complete || state->closed ||
        notice->node_rank < 0 ||
        notice->node_rank >= static_cast<int>(state->participants.size())) {
      co_return true;
    }
    const RendezvousState next =
        ReformedWithout(*state, {state->participants[static_cast<size_t>(notice->node_rank)]});
    if (!co_await WriteRound(&snapshot, next)) continue;
    co_return true;
  }
}

void DynamicRendezvous::ReportProgress(const RendezvousState& state, Clock::time_point deadline,
                                       int joined) {
  if (!settings_.progress) return;
  const std::string where = "the store " + client_.peer();
  settings_.progress(
      ProgressLine(state, settings_, where, deadline - Clock::now(), WallMs(), joined));
}

Rendezvous::Task<void> DynamicRendezvous::Disarm() {
  try {
    if (client_.connected()) co_await client_.CancelWills();
  } catch (const std::exception&) {
    // The store is gone: so is the will.
  }
}

Rendezvous::Task<void> DynamicRendezvous::Close(std::string reason) {
  const auto deadline = Clock::now() + settings_.close_timeout;
  try {
    while (client_.connected() && Clock::now() < deadline) {
      Snapshot snapshot = co_await Read();
      if (!snapshot.state || snapshot.state->closed) co_return;
      if (co_await Write(&snapshot, Closed(*snapshot.state, reason))) co_return;
    }
  } catch (const std::exception&) {
    // Best effort: the job is over either way.
  }
}

}  // namespace cpplaunch
