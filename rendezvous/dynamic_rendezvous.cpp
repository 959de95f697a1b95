#include "rendezvous/dynamic_rendezvous.h"

#include <algorithm>
#include <charconv>

#include "rendezvous/store_steps.h"
#include "rendezvous/waiting_line.h"

namespace cpplaunch {
namespace {

using Clock = AsyncStoreClient::Clock;

// COMPARE_SET with this `expected` never stores anything (no state can equal it), so its reply is
// the current value, or `expected` itself when the key is missing: a one-round-trip read.
const Bytes kAbsentProbe = std::string(
    "\x01"
    "absent");

// Wall-clock, not steady: the last-call deadline is stored in the shared state and compared by
// every host, and a steady clock's epoch is private to one machine. Hosts' clocks must roughly
// agree, as with torchrun, whose state holds datetime deadlines.
int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The decimal count stored in an agents' key (0 when absent or not a number).
int64_t CountIn(const std::optional<Bytes>& value) {
  int64_t count = 0;
  if (value) std::from_chars(value->data(), value->data() + value->size(), count);
  return count;
}

}  // namespace

DynamicRendezvous::DynamicRendezvous(boost::asio::any_io_executor executor,
                                     RendezvousSettings settings)
    : settings_(std::move(settings)),
      client_(std::move(executor),
              AsyncStoreClient::Options::Agent(settings_.read_timeout, settings_.secret)) {}

std::string DynamicRendezvous::StateKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/state";
}
std::string DynamicRendezvous::VersionKey(int64_t version) const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/version/" + std::to_string(version);
}
std::string DynamicRendezvous::EpochKey(int64_t epoch) const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/epoch/" + std::to_string(epoch);
}
std::string DynamicRendezvous::TicketKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/ticket";
}
std::string DynamicRendezvous::PassedKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/passed";
}
std::string DynamicRendezvous::TurnKey(int64_t ticket) const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/turn/" + std::to_string(ticket);
}
std::string DynamicRendezvous::NodeKey(const std::string& node_id) const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/node/" + node_id;
}
std::string DynamicRendezvous::AliveKey(const std::string& node_id) const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/alive/" + node_id;
}
std::string DynamicRendezvous::AssignKey(int64_t round, const std::string& node_id) const {
  return rendezvous_keys::Round(settings_.run_id, round) + "assign/" + node_id;
}
std::string DynamicRendezvous::SummaryKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/summary";
}
std::string DynamicRendezvous::QueueKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/queue";
}
std::string DynamicRendezvous::QueuedCountKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/queued";
}
std::string DynamicRendezvous::AdmittedCountKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/admitted";
}
std::string DynamicRendezvous::AdmitterKey() const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/admitter";
}
std::string DynamicRendezvous::AnswerKey(const std::string& node_id, int64_t attempt) const {
  return rendezvous_keys::Base(settings_.run_id) + "dynamic/answer/" + node_id + "/" +
         std::to_string(attempt);
}
std::string DynamicRendezvous::PublisherKey(int64_t round) const {
  return rendezvous_keys::Round(settings_.run_id, round) + "assign_publisher";
}

Rendezvous::Task<RendezvousResult> DynamicRendezvous::Next(
    std::optional<RoundTransition> previous) {
  const auto started = Clock::now();
  // join_timeout, not timeout, bounds the join: torchrun's c10d backend ignores the generic key.
  const auto deadline = started + settings_.join_timeout;
  if (!client_.connected()) {
    co_await ConnectWithProgress(client_, settings_.store_host, settings_.store_port,
                                 settings_.self.Label(), deadline, settings_.progress_interval,
                                 settings_.progress);
    CompleteSelf(client_, &settings_);
  }
  co_await PublishSelf();
  const JoinRequest me = JoinRequestFor(previous);
  next_progress_ = Clock::now() + settings_.progress_interval;
  std::optional<RendezvousResult> queued = co_await JoinThroughQueue(me, deadline);
  if (queued) co_return std::move(*queued);
  Snapshot snapshot;  // assume no state: the first write creates it or returns the real one
  int64_t turn = kNoTurn;
  for (;;) {
    JoinDecision decision = DecideJoin(snapshot.state, me, WallMs());
    switch (decision.action) {
      case JoinAction::kWrite: {
        if (turn == kNoTurn) {  // queue up first, then decide again on the state as it is then
          turn = co_await TakeTurn(deadline);
          snapshot = co_await Read();
          break;
        }
        if (co_await DropDeadParticipants(&snapshot, decision.next)) break;
        const int64_t epoch_before = snapshot.state ? snapshot.state->epoch : 0;
        const bool wrote = co_await CompareAndSwap(&snapshot, decision.next);
        // The next host's turn comes first: the wake-ups below are off the queue's path.
        if (turn != kTurnPassed) turn = co_await PassTurn(turn);
        if (!wrote) break;
        // Before the wake-up: the woken members look for their assignments first.
        if (decision.next.complete) co_await PublishAssignments(decision.next);
        co_await WakeWaiters(epoch_before, decision.next);
        if (decision.next.IsWaiting(me.node_id)) co_await AnnounceWaiting(decision.next);
        break;
      }
      case JoinAction::kDone: {
        if (turn > 0) turn = co_await PassTurn(turn);
        const RoundAssignment assignment = co_await AwaitAssignment(decision.next, deadline);
        co_return co_await Finish(assignment, deadline);
      }
      case JoinAction::kClosed:
        throw RendezvousError("cannot join job '" + settings_.run_id + "' at the store " +
                              client_.peer() + " from " + settings_.self.Label() +
                              ": its rendezvous is closed (" + decision.message + ")");
      case JoinAction::kMismatch:
        co_await RefuseMismatch(&snapshot, decision);  // throws
        break;
      case JoinAction::kWait:
        if (turn > 0) turn = co_await PassTurn(turn);
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
          if (assignment) co_return co_await Finish(*assignment, deadline);
        }
        snapshot = co_await Read();
        break;
    }
  }
}

Rendezvous::Task<std::optional<RendezvousResult>> DynamicRendezvous::JoinThroughQueue(
    const JoinRequest& me, Clock::time_point deadline) {
  const QueuedJoin join{me, ++attempts_};
  co_await client_.Append(QueueKey(), EncodeJoinLine(join));
  co_await client_.Add(QueuedCountKey(), 1);
  const std::string answer_key = AnswerKey(me.node_id, join.attempt);
  // The admission may take a while for thousands of hosts; only a count of applied lines that
  // stands still for queue_timeout means its holder is stuck.
  int64_t admitted_seen = -1;
  auto moved_at = Clock::now();
  std::optional<Bytes> text;
  for (;;) {
    co_await Admit();
    // A WAIT answers at once when the key is there: no read before it.
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    std::vector<std::string> keys{answer_key};
    const auto slice = std::min(kAnswerWait, settings_.queue_timeout);
    if (co_await client_.Wait(std::move(keys),
                              std::clamp(left, std::chrono::milliseconds(1), slice))) {
      text = co_await client_.Get(answer_key);
      break;
    }
    if (left <= std::chrono::milliseconds::zero()) break;
    const int64_t count = CountIn(co_await ReadIfPresent(client_, AdmittedCountKey()));
    if (admitted_seen >= 0 && count != admitted_seen) moved_at = Clock::now();
    admitted_seen = count;
    if (Clock::now() - moved_at >= settings_.queue_timeout) break;
  }
  const std::optional<JoinAnswer> answer = text ? ParseJoinAnswer(*text) : std::nullopt;
  if (!answer || !answer->admitted) co_return std::nullopt;
  // A participant: the round's completion is the next epoch. Other epochs (the last call armed
  // or disarmed) and progress lines are read from the summary, not the whole state; when the last
  // call expires, the admitting host completes the round for everybody (one write, not one per
  // participant). Anything else hands over to the DecideJoin loop.
  int64_t epoch = answer->epoch;
  int64_t last_call_ms = answer->last_call_deadline_ms;
  for (;;) {
    auto until = std::min(deadline, next_progress_);
    if (last_call_ms != 0) {
      until =
          std::min(until, Clock::now() + std::chrono::milliseconds(last_call_ms - WallMs() + 1));
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    std::vector<std::string> keys{EpochKey(epoch + 1)};
    const bool changed =
        co_await client_.Wait(std::move(keys), std::max(left, std::chrono::milliseconds(1)));
    std::optional<RoundAssignment> assignment = co_await ReadAssignment(answer->round);
    if (assignment) co_return co_await Finish(*assignment, deadline);
    if (Clock::now() >= deadline) co_return std::nullopt;  // the loop leaves and says why
    std::string error;
    const std::optional<Bytes> text = co_await ReadIfPresent(client_, SummaryKey());
    const auto summary = text ? DecodeSummary(*text, &error) : std::nullopt;
    // Written before the epoch key, so at least as new as the epoch that woke this host, unless
    // two writers crossed.
    if (!summary || summary->state.round != answer->round || summary->state.closed ||
        (changed && summary->state.epoch <= epoch)) {
      co_return std::nullopt;
    }
    // Completed since the assignment was looked for: its epoch key is set, the next wait returns
    // at once and finds the assignment (or, if its writer died before publishing, hands over).
    if (summary->state.complete) {
      if (changed) co_return std::nullopt;
      continue;
    }
    epoch = std::max(epoch, summary->state.epoch);
    last_call_ms = summary->state.last_call_deadline_ms;
    if (Clock::now() >= next_progress_) {
      ReportProgress(summary->state, deadline, summary->joined);
      next_progress_ = Clock::now() + settings_.progress_interval;
    }
    if (last_call_ms != 0 && WallMs() >= last_call_ms) co_await Admit();
  }
}

Rendezvous::Task<void> DynamicRendezvous::Admit() {
  const std::string& me = settings_.self.node_id;
  for (;;) {
    if (co_await client_.Claim(AdmitterKey(), me) != me) co_return;
    co_await AdmitQueued();
    co_await client_.DeleteKey(AdmitterKey());
    // A host that queued after the last batch and tried the role before it was released would
    // wait for an answer that nobody gives: look once more, now that the role is free.
    const int64_t queued = co_await client_.Add(QueuedCountKey(), 0);
    const std::optional<Bytes> admitted = co_await ReadIfPresent(client_, AdmittedCountKey());
    if (admitted && queued <= CountIn(admitted)) co_return;
  }
}

// One batch per pass: the state and the queue are read once, every new line is applied in one
// COMPARE_SET, and each request's answer is written in one MULTI_SET.
Rendezvous::Task<void> DynamicRendezvous::AdmitQueued() {
  for (;;) {
    Snapshot snapshot = co_await Read();
    const std::optional<Bytes> queue = co_await ReadIfPresent(client_, QueueKey());
    std::string error;
    const int64_t skip = snapshot.state ? snapshot.state->admitted : 0;
    auto joins = ParseJoinQueue(queue.value_or(Bytes()), skip, &error);
    if (!joins) {
      throw RendezvousError("the store at " + client_.peer() + " holds an unreadable join queue " +
                            "for job '" + settings_.run_id + "': " + error);
    }
    if (joins->empty()) {
      // Nothing queued; the participants' last call may have expired: complete the round once
      // for all of them.
      if (!snapshot.state) co_return;
      const auto completed = CompletedAtLastCall(*snapshot.state, WallMs());
      if (!completed) co_return;
      if (co_await DropDeadParticipants(&snapshot, *completed)) continue;
      const int64_t epoch_before = snapshot.state->epoch;
      if (!co_await CompareAndSwap(&snapshot, *completed)) continue;
      co_await PublishAssignments(*completed);
      co_await WakeWaiters(epoch_before, *completed);
      co_return;
    }
    std::vector<JoinRequest> requests;
    for (const QueuedJoin& join : *joins) requests.push_back(join.request);
    const Admission admission = AdmitJoins(snapshot.state, requests, WallMs());
    if (co_await DropDeadParticipants(&snapshot, admission.next)) continue;
    const int64_t epoch_before = snapshot.state ? snapshot.state->epoch : 0;
    if (!co_await CompareAndSwap(&snapshot, admission.next)) continue;
    const RendezvousState& next = admission.next;
    if (next.complete) co_await PublishAssignments(next);
    std::vector<std::string> keys;
    std::vector<Bytes> values;
    for (size_t i = 0; i < joins->size(); ++i) {
      const JoinAnswer answer{admission.admitted[i], next.round, epoch_before,
                              next.last_call_deadline_ms};
      keys.push_back(AnswerKey((*joins)[i].request.node_id, (*joins)[i].attempt));
      values.push_back(EncodeJoinAnswer(answer));
    }
    co_await client_.MultiSet(std::move(keys), std::move(values));
    co_await client_.Set(AdmittedCountKey(), std::to_string(next.admitted));
    // Every batch: the participants' progress lines count the hosts from it.
    if (next.epoch == epoch_before) co_await client_.Set(SummaryKey(), EncodeSummary(next));
    co_await WakeWaiters(epoch_before, next);
  }
}

// Hosts that arrive together would all COMPARE_SET the one state key at once: each success
// fails every other write in flight, and each failure carries the whole state back, so N
// arrivals cost O(N^2) writes (O(N^3) bytes). A host that is about to write first takes a ticket
// and waits until the previous ticket's holder has written, so the writes come one after the
// other and nearly all succeed. The turn only orders writes; COMPARE_SET still decides them.
// A holder that died (or is stuck) never passes its turn: a count of passed turns shows whether
// the queue moves, and when it has not moved for kTurnWait the next host in line writes anyway
// (the host behind that one after twice as long, and so on), so that waiting hosts do not all
// rush the key at once.
Rendezvous::Task<int64_t> DynamicRendezvous::TakeTurn(Clock::time_point deadline) {
  constexpr auto kSlice = std::chrono::milliseconds(100);
  const int64_t ticket = co_await client_.Add(TicketKey(), 1);
  int64_t passed_seen = -1;
  auto moved_at = Clock::now();
  int64_t place = ticket - 1;  // turns ahead of this one not yet passed (as last seen)
  while (ticket > 1 && Clock::now() < deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    // A host far back in the queue looks at it less often: N waiters polling at one rate load
    // the store with O(N) requests a slice (at 2,000 hosts, 100 ms slices made it 4x slower).
    const auto slice = std::min<std::chrono::milliseconds>(kSlice * place, kTurnWait);
    std::vector<std::string> keys{TurnKey(ticket)};
    if (co_await client_.Wait(std::move(keys),
                              std::clamp(left, std::chrono::milliseconds(1), slice))) {
      break;
    }
    const int64_t passed = co_await client_.Add(PassedKey(), 0);
    place = std::max<int64_t>(ticket - passed - 1, 1);  // 1: next after the holder
    if (passed != passed_seen) {
      passed_seen = passed;
      moved_at = Clock::now();
      continue;
    }
    if (Clock::now() - moved_at >= kTurnWait * place) {
      co_await client_.Add(PassedKey(), ticket - 1 - passed);  // the stuck turns count as passed
      break;
    }
  }
  co_return ticket;
}

Rendezvous::Task<int64_t> DynamicRendezvous::PassTurn(int64_t ticket) {
  co_await client_.Set(TurnKey(ticket + 1), "");
  co_await client_.Add(PassedKey(), 1);
  co_return kTurnPassed;
}

// The node record, the liveness key and the heartbeat counter exist before this node can be a
// participant: the others read every participant's record, the one completing a round checks
// every participant's liveness key, and the job channel counts a counter that never appears as
// a lost peer. The liveness key is owned by this connection: it vanishes when the agent dies. It
// is claimed again at every round, since a peer deletes it when this agent's heartbeats lapse
// (a frozen host), and node ids are unique per agent, so the claim is always this agent's.
Rendezvous::Task<void> DynamicRendezvous::PublishSelf() {
  const NodeInfo& self = settings_.self;
  if (!published_) {
    std::vector<std::string> keys{NodeKey(self.node_id),
                                  rendezvous_keys::Heartbeat(settings_.run_id, self.node_id)};
    std::vector<Bytes> values{self.Encode(), "0"};
    co_await client_.MultiSet(std::move(keys), std::move(values));
    published_ = true;
  }
  co_await client_.Claim(AliveKey(self.node_id), self.node_id);
}

// Before a write completes a round, its participants must be alive: one that died while the
// round waited (last call, or fewer than MIN) would be counted, and its peers would start
// workers that wait for its workers until the heartbeats find it. A participant whose liveness
// key is gone is removed instead, and the join decides again (the round may still complete
// without it, or wait for others). Returns true when it removed someone.
Rendezvous::Task<bool> DynamicRendezvous::DropDeadParticipants(Snapshot* snapshot,
                                                               const RendezvousState& next) {
  if (!next.complete || !snapshot->state || snapshot->state->complete) co_return false;
  // Usually all are alive: one CHECK and one MULTI_GET for the whole round, not a read each.
  std::vector<std::string> alive_keys;
  std::vector<std::string> ids;
  for (const auto& id : next.participants) {
    if (id == settings_.self.node_id) continue;
    alive_keys.push_back(AliveKey(id));
    ids.push_back(id);
  }
  if (co_await client_.Check(alive_keys)) {
    const std::vector<Bytes> holders = co_await client_.MultiGet(alive_keys);
    if (holders == ids) co_return false;
  }
  std::vector<std::string> gone;
  for (const auto& id : next.participants) {
    if (id == settings_.self.node_id) continue;
    // Named, not a temporary in the co_await expression: GCC 12 destroys those twice.
    RoundPeer member{0, NodeInfo{}, AliveKey(id)};
    member.node.node_id = id;
    if (co_await MemberAlive(client_, member)) continue;
    gone.push_back(id);
    if (settings_.progress) {
      settings_.progress("host " + id + " left round " + std::to_string(snapshot->state->round) +
                         " before it completed (its connection to the store closed)");
    }
  }
  if (gone.empty()) co_return false;
  co_await Write(snapshot, WithoutNodes(*snapshot->state, gone));
  co_return true;
}

JoinRequest DynamicRendezvous::JoinRequestFor(
    const std::optional<RoundTransition>& previous) const {
  JoinRequest me;
  me.node_id = settings_.self.node_id;
  me.min_nodes = settings_.min_nodes;
  me.max_nodes = settings_.max_nodes;
  me.last_call_timeout = settings_.last_call_timeout;
  me.min_round = previous ? previous->round + 1 : 0;
  me.restart_count = previous ? previous->restart_count + (previous->failure ? 1 : 0) : 0;
  return me;
}

// This node's settings contradict the round's (--nnodes, --max-restarts): the rendezvous is
// closed with the reason, and when the round was already running its hosts are told through
// the round's end key, so every host stops with the same message instead of waiting.
Rendezvous::Task<void> DynamicRendezvous::RefuseMismatch(Snapshot* snapshot,
                                                         const JoinDecision& decision) {
  const NodeInfo& self = settings_.self;
  std::string message = self.Label() + ": " + decision.message;
  RendezvousState closed = Closed(decision.next, message);
  co_await Write(snapshot, closed);
  if (decision.next.complete) {
    RoundEnd notice;
    notice.kind = RoundEndKind::kConfigError;
    notice.host = self.hostname;
    notice.addr = self.addr;
    notice.detail = message;
    co_await PublishRoundEnd(client_, settings_.run_id, decision.next.round, notice);
  }
  throw RendezvousError(message);
}

RendezvousError DynamicRendezvous::TimeoutError(const Snapshot& snapshot,
                                                Clock::time_point started) const {
  std::string state = snapshot.state
                          ? std::to_string(snapshot.state->participants.size()) +
                                " host(s) had joined round " + std::to_string(snapshot.state->round)
                          : "no host had joined";
  return RendezvousError("rendezvous of job '" + settings_.run_id + "' at the store " +
                         client_.peer() + " timed out on " + settings_.self.Label() + " after " +
                         FormatSeconds(Clock::now() - started) + " (join_timeout): " + state +
                         ", --nnodes=" + NnodesText(settings_.min_nodes, settings_.max_nodes));
}

// Waits for the state to change, for the decision's wake-up time (last call), or for the next
// progress line, whichever comes first; prints the progress line when it is due.
Rendezvous::Task<void> DynamicRendezvous::WaitForNews(const Snapshot& snapshot,
                                                      const JoinDecision& decision,
                                                      Clock::time_point deadline) {
  auto until = std::min(deadline, next_progress_);
  if (decision.wake_at_ms != 0) {
    until =
        std::min(until, Clock::now() + std::chrono::milliseconds(decision.wake_at_ms - WallMs()));
  }
  co_await WaitForChange(snapshot, until);
  if (Clock::now() >= next_progress_) {
    ReportProgress(decision.next, deadline);
    next_progress_ = Clock::now() + settings_.progress_interval;
  }
}

Rendezvous::Task<DynamicRendezvous::Snapshot> DynamicRendezvous::Read() {
  Bytes stored = co_await client_.CompareSet(StateKey(), kAbsentProbe, kAbsentProbe + "!");
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

Rendezvous::Task<bool> DynamicRendezvous::CompareAndSwap(Snapshot* snapshot,
                                                         const RendezvousState& next) {
  Bytes desired = next.Encode();
  Bytes stored = co_await client_.CompareSet(StateKey(), snapshot->raw, desired);
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
  co_await client_.Set(VersionKey(next.version), "");
  if (next.epoch == epoch_before) co_return;
  // The summary first: a participant woken by the epoch reads it, not the whole state.
  co_await client_.Set(SummaryKey(), EncodeSummary(next));
  co_await client_.Set(EpochKey(epoch_before + 1), "");
}

Rendezvous::Task<void> DynamicRendezvous::WaitForChange(const Snapshot& snapshot,
                                                        Clock::time_point until) {
  int64_t version = snapshot.state ? snapshot.state->version : 0;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  // A participant of an incomplete round sleeps through other hosts' joins (rendezvous_state.h,
  // epoch); everybody else reacts to every write.
  const bool participant = snapshot.state && !snapshot.state->complete &&
                           snapshot.state->RankOf(settings_.self.node_id) >= 0;
  std::vector<std::string> keys{participant ? EpochKey(snapshot.state->epoch + 1)
                                            : VersionKey(version + 1)};
  co_await client_.Wait(std::move(keys), std::max(left, std::chrono::milliseconds(1)));
}

// A host that joined the wait list of a running round ends that round, so the running hosts
// restart and the next round takes everybody (torchrun's membership change).
Rendezvous::Task<void> DynamicRendezvous::AnnounceWaiting(const RendezvousState& state) {
  RoundEnd notice;
  notice.kind = RoundEndKind::kMembershipChange;
  notice.host = settings_.self.hostname;
  notice.addr = settings_.self.addr;
  notice.detail = "round " + std::to_string(state.round) + " has " +
                  std::to_string(state.participants.size()) + " of at most " +
                  std::to_string(state.max_nodes) + " hosts";
  co_await PublishRoundEnd(client_, settings_.run_id, state.round, notice);
  if (settings_.progress) {
    settings_.progress("job '" + settings_.run_id + "' is running with " +
                       std::to_string(state.participants.size()) +
                       " host(s); asked it to restart so that this host can join");
  }
}

Rendezvous::Task<void> DynamicRendezvous::Leave(Snapshot snapshot) {
  // Next() goes on with this object after Leave(): not when the rendezvous was destroyed meanwhile
  // (its client's operations then fail), so that failure is passed on, not swallowed.
  const auto closed = client_.ClosedProbe();
  try {
    for (int attempt = 0; attempt < 5 && snapshot.state; ++attempt) {
      const auto& state = *snapshot.state;
      const std::string& me = settings_.self.node_id;
      bool listed = state.IsWaiting(me) || (!state.complete && state.RankOf(me) >= 0);
      if (!listed || co_await Write(&snapshot, WithoutNode(state, me))) co_return;
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
  if (co_await client_.Claim(PublisherKey(state.round), me) != me) co_return;
  std::vector<std::string> keys;
  for (const auto& id : state.participants) keys.push_back(NodeKey(id));
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
    assign_keys.push_back(AssignKey(state.round, state.participants[assignment.group_rank]));
    values.push_back(assignment.Encode());
  }
  co_await client_.MultiSet(std::move(assign_keys), std::move(values));
}

Rendezvous::Task<std::optional<RoundAssignment>> DynamicRendezvous::ReadAssignment(int64_t round) {
  const auto stored = co_await ReadIfPresent(client_, AssignKey(round, settings_.self.node_id));
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
    std::vector<std::string> keys{AssignKey(state.round, settings_.self.node_id)};
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

Rendezvous::Task<RendezvousResult> DynamicRendezvous::Finish(const RoundAssignment& assignment,
                                                             Clock::time_point deadline) {
  std::vector<std::string> keys;
  for (const auto& [rank, id] : assignment.peers) keys.push_back(NodeKey(id));
  RendezvousResult result;
  result.round = assignment.round;
  result.restart_count = assignment.restart_count;
  result.group_rank = assignment.group_rank;
  result.group_size = assignment.group_world_size;
  result.base_rank = assignment.base_rank;
  result.world_size = assignment.world_size;
  result.master_addr = settings_.master_addr;
  result.master_port = settings_.master_port;
  std::vector<Bytes> values = co_await client_.MultiGet(std::move(keys));
  for (size_t i = 0; i < values.size(); ++i) {
    std::string error;
    auto node = NodeInfo::Decode(values[i], &error);
    if (!node) throw RendezvousError("unreadable node info in the store: " + error);
    const auto& [rank, id] = assignment.peers[i];
    if (node->node_id != id) {
      throw RendezvousError("the store's record of node " + id + " names " + node->node_id);
    }
    result.members.push_back(RoundPeer{rank, std::move(*node), AliveKey(id)});
  }
  if (result.self().node_id != settings_.self.node_id) {
    throw RendezvousError("round " + std::to_string(result.round) + " of job '" + settings_.run_id +
                          "' gave this host's place to " + result.self().node_id);
  }
  const std::string round_text =
      "round " + std::to_string(result.round) + " of job '" + settings_.run_id + "'";
  co_await ArmRound(client_, settings_.run_id, result, deadline,
                    round_text + ": not every host armed the round");
  co_await ReleaseRound(client_, settings_.run_id, result.round, result.group_rank, deadline,
                        settings_.progress_interval,
                        round_text + ": group rank 0 did not release the round");
  co_return result;
}

void DynamicRendezvous::ReportProgress(const RendezvousState& state, Clock::time_point deadline,
                                       int joined) {
  if (!settings_.progress) return;
  const std::string where = "the store " + client_.peer();
  WaitingView view{settings_.run_id,
                   settings_.self.node_id,
                   where,
                   std::chrono::milliseconds(state.last_call_deadline_ms - WallMs()),
                   deadline - Clock::now(),
                   joined};
  settings_.progress(WaitingLine(state, view));
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
