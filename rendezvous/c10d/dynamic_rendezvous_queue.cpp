// The queued join path of the c10d rendezvous (dynamic_rendezvous.h): a host appends its request
// to the join queue, and whichever host holds the admission role applies every queued request in
// one write. A host the queue does not admit, or one whose admission stands still, hands over to
// the DecideJoin loop (dynamic_rendezvous.cpp).

#include <algorithm>
#include <charconv>

#include "rendezvous/c10d/dynamic_rendezvous.h"
#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/core/join_steps.h"

namespace cpplaunch {
namespace {

using Clock = AsyncStoreClient::Clock;

// The decimal count stored in an agents' key (0 when absent or not a number).
int64_t CountIn(const std::optional<Bytes>& value) {
  int64_t count = 0;
  if (value) std::from_chars(value->data(), value->data() + value->size(), count);
  return count;
}

}  // namespace

Rendezvous::Task<std::optional<RendezvousResult>> DynamicRendezvous::JoinThroughQueue(
    const JoinRequest& me, Clock::time_point deadline) {
  const QueuedJoin join{me, ++attempts_};
  co_await client_.Append(keys_.Queue(), EncodeJoinLine(join));
  co_await client_.Add(keys_.QueuedCount(), 1);
  const std::optional<JoinAnswer> answer = co_await AwaitAnswer(join, deadline);
  if (settings_.trace) settings_.trace("rendezvous: " + JoinAnswerLine(answer));
  if (!answer || !answer->admitted) co_return std::nullopt;
  co_return co_await AwaitCompletion(*answer, deadline);
}

Rendezvous::Task<std::optional<JoinAnswer>> DynamicRendezvous::AwaitAnswer(
    const QueuedJoin& join, Clock::time_point deadline) {
  const std::string answer_key = keys_.Answer(join.request.node_id, join.attempt);
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
    const int64_t count = CountIn(co_await ReadIfPresent(client_, keys_.AdmittedCount()));
    if (admitted_seen >= 0 && count != admitted_seen) moved_at = Clock::now();
    admitted_seen = count;
    if (Clock::now() - moved_at >= settings_.queue_timeout) break;
  }
  co_return text ? ParseJoinAnswer(*text) : std::nullopt;
}

Rendezvous::Task<std::optional<RendezvousResult>> DynamicRendezvous::AwaitCompletion(
    const JoinAnswer& answer, Clock::time_point deadline) {
  // A participant: the round's completion is the next epoch. Other epochs (the last call armed
  // or disarmed) and progress lines are read from the summary, not the whole state; when the last
  // call expires, the admitting host completes the round for everybody (one write, not one per
  // participant). Anything else hands over to the DecideJoin loop.
  int64_t epoch = answer.epoch;
  int64_t last_call_ms = answer.last_call_deadline_ms;
  for (;;) {
    // Just past the last call, when it is armed.
    const int64_t wake_at_ms = last_call_ms != 0 ? last_call_ms + 1 : 0;
    const auto until = WakeTime(deadline, next_progress_, wake_at_ms, Clock::now(), WallMs());
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    std::vector<std::string> keys{keys_.Epoch(epoch + 1)};
    const bool changed =
        co_await client_.Wait(std::move(keys), std::max(left, std::chrono::milliseconds(1)));
    std::optional<RoundAssignment> assignment = co_await ReadAssignment(answer.round);
    // Finish's nullopt (the round was formed again without a lost member) hands over too.
    if (assignment) co_return co_await Finish(*assignment, deadline);
    if (Clock::now() >= deadline) co_return std::nullopt;  // the loop leaves and says why
    std::string error;
    const std::optional<Bytes> stored = co_await ReadIfPresent(client_, keys_.Summary());
    const auto summary = stored ? DecodeSummary(*stored, &error) : std::nullopt;
    // Written before the epoch key, so at least as new as the epoch that woke this host, unless
    // two writers crossed.
    if (!summary || summary->state.round != answer.round || summary->state.closed ||
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
    if (co_await client_.Claim(keys_.Admitter(), me) != me) co_return;
    co_await AdmitQueued();
    co_await client_.DeleteKey(keys_.Admitter());
    // A host that queued after the last batch and tried the role before it was released would
    // wait for an answer that nobody gives: look once more, now that the role is free.
    const int64_t queued = co_await client_.Add(keys_.QueuedCount(), 0);
    const std::optional<Bytes> admitted = co_await ReadIfPresent(client_, keys_.AdmittedCount());
    if (admitted && queued <= CountIn(admitted)) co_return;
  }
}

// One batch per pass: the state and the queue are read once, every new line is applied in one
// COMPARE_SET, and each request's answer is written in one MULTI_SET.
Rendezvous::Task<void> DynamicRendezvous::AdmitQueued() {
  for (;;) {
    Snapshot snapshot = co_await Read();
    const std::optional<Bytes> queue = co_await ReadIfPresent(client_, keys_.Queue());
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
      if (!co_await WriteRound(&snapshot, *completed)) continue;
      co_return;
    }
    std::vector<JoinRequest> requests;
    for (const QueuedJoin& join : *joins) requests.push_back(join.request);
    const Admission admission = AdmitJoins(snapshot.state, requests, WallMs());
    if (co_await DropDeadParticipants(&snapshot, admission.next)) continue;
    const int64_t epoch_before = snapshot.state ? snapshot.state->epoch : 0;
    if (!co_await CompareAndSwap(&snapshot, admission.next)) continue;
    const RendezvousState& next = admission.next;
    if (settings_.trace) settings_.trace("rendezvous: " + AdmissionLine(admission));
    if (next.complete) co_await PublishAssignments(next);
    std::vector<std::string> keys;
    std::vector<Bytes> values;
    for (size_t i = 0; i < joins->size(); ++i) {
      const JoinAnswer answer{admission.admitted[i], next.round, epoch_before,
                              next.last_call_deadline_ms};
      keys.push_back(keys_.Answer((*joins)[i].request.node_id, (*joins)[i].attempt));
      values.push_back(EncodeJoinAnswer(answer));
    }
    co_await client_.MultiSet(std::move(keys), std::move(values));
    co_await client_.Set(keys_.AdmittedCount(), std::to_string(next.admitted));
    // Every batch: the participants' progress lines count the hosts from it.
    if (next.epoch == epoch_before) co_await client_.Set(keys_.Summary(), EncodeSummary(next));
    co_await WakeWaiters(epoch_before, next);
  }
}

}  // namespace cpplaunch
