// The queued join path of the etcd rendezvous (etcd_rendezvous.h): an agent puts its request
// under its own key, the agent holding the admitter key applies every queued request in batches,
// and an admitted participant waits on the small epoch key, then reads its own assignment and its
// few peers' records. An agent the queue does not admit, or whose admission stands still, hands
// over to the decide-join loop (etcd_rendezvous.cpp).

#include <algorithm>
#include <charconv>
#include <exception>
#include <map>
#include <set>

#include "rendezvous/core/join_steps.h"
#include "rendezvous/core/node_id.h"
#include "rendezvous/core/seats.h"
#include "rendezvous/etcd/etcd_assignment.h"
#include "rendezvous/etcd/etcd_rendezvous.h"

namespace cpplaunch {
namespace {

// An answer's value: "<attempt> <EncodeJoinAnswer>", so that an answer to an earlier join of the
// same agent is never taken for this one's.
std::string AnswerValue(int64_t attempt, const JoinAnswer& answer) {
  return std::to_string(attempt) + " " + EncodeJoinAnswer(answer);
}

std::optional<JoinAnswer> AnswerOf(std::string_view value, int64_t attempt) {
  const size_t space = value.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  int64_t stored = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + space, stored);
  if (error != std::errc() || end != value.data() + space || stored != attempt) return std::nullopt;
  return ParseJoinAnswer(value.substr(space + 1));
}

}  // namespace

Rendezvous::Task<std::optional<RendezvousResult>> EtcdRendezvous::JoinThroughQueue(
    const JoinRequest& me, Clock::time_point deadline) {
  const QueuedJoin join{me, ++attempts_};
  const std::string& id = settings_.self.node_id;
  std::string record_key = link_->keys().Node(id);
  std::vector<etcd::Compare> fresh;
  if (!record_created_) fresh.push_back(etcd::Compare::Absent(record_key));
  // The admitter key is read with them: when another agent holds it, it sees this request before
  // it frees the key, and this agent need not ask for the key now (N agents arriving together
  // would otherwise all ask).
  std::vector<etcd::TxnOp> puts{
      etcd::TxnOp::Put(std::move(record_key), settings_.self.Encode(), link_->lease()),
      etcd::TxnOp::Put(link_->keys().Join(id), EncodeJoinLine(join), link_->lease()),
      etcd::TxnOp::Range(link_->keys().Admitter())};
  std::vector<etcd::TxnOp> holder{etcd::TxnOp::Range(link_->keys().Node(id))};
  etcd::TxnResult enqueued = co_await link_->client().Txn(fresh, puts, std::move(holder));
  if (!enqueued.succeeded) {
    // A record on this agent's own lease is its own: the client sent the transaction again
    // after etcd answered the first attempt too late. Queued once more, without the check.
    const bool ours = !enqueued.ranges.empty() && !enqueued.ranges.front().kvs.empty() &&
                      enqueued.ranges.front().kvs.front().lease == link_->lease();
    if (!ours) {
      throw RendezvousError(
          NodeIdClashMessage(settings_.run_id, settings_.self.node_id,
                             settings_.self.Label() + " (etcd at " + link_->Endpoints() + ")"));
    }
    enqueued = co_await link_->client().Txn({}, std::move(puts), {});
  }
  record_created_ = true;
  const int64_t put = enqueued.revision;
  // The watch replays an answer given between the put and its start. It goes on after the
  // answer, for the round's epoch steps and this agent's assignment (etcd_keys.h: inbox).
  std::string inbox = link_->keys().Inbox(id);
  std::string inbox_end = etcd::PrefixEnd(inbox);
  Watch(std::move(inbox), std::move(inbox_end), put + 1);
  const bool held = !enqueued.ranges.empty() && !enqueued.ranges.front().kvs.empty();
  const auto answer = co_await AwaitAnswer(join.attempt, put, !held, deadline);
  if (settings_.trace) {
    settings_.trace("rendezvous: " + JoinAnswerLine(answer ? std::optional(answer->first)
                                                           : std::optional<JoinAnswer>()));
  }
  if (!answer) {
    // Best effort: an admitter that comes later must not apply it behind the loop's back.
    co_await link_->client().Delete(link_->keys().Join(id));
    StopWatch();
    co_return std::nullopt;
  }
  if (!answer->first.admitted) {
    StopWatch();
    co_return std::nullopt;
  }
  co_return co_await AwaitCompletion(answer->first, answer->second, deadline);
}

Rendezvous::Task<std::optional<std::pair<JoinAnswer, int64_t>>> EtcdRendezvous::AwaitAnswer(
    int64_t attempt, int64_t from_revision, bool admit, Clock::time_point deadline) {
  const std::string key = link_->keys().Answer(settings_.self.node_id);
  // The admission may take a while for thousands of agents; only a summary that stands still
  // for stuck_after means its holder is stuck (a frozen holder loses its lease and the key).
  int64_t summary_seen = -1;
  auto moved_at = Clock::now();
  int64_t seen = from_revision;
  if (admit) co_await Admit();
  // The admission may stand still as long as one of its requests may take (a request's bound
  // grows with the job: etcd_plan.h): at 4,000 agents on one member a stall of 5 s (the default
  // queue_timeout) sent every waiting agent to the decide-join loop at once, whose reads and
  // writes of the whole state then sank the member.
  const Clock::duration stuck_after =
      std::max<Clock::duration>(settings_.queue_timeout, link_->settings().client.request_timeout);
  // A dead holder's key lasts as long as its lease: looking more often than a third of it would
  // only load etcd, and in a large job the agents look at most kProgressReadsPerSecond times a
  // second in all (HerdPace).
  const auto slice = std::min<Clock::duration>(
      std::max<Clock::duration>({kAnswerWait, link_->settings().lease_ttl / 3, HerdPace()}),
      stuck_after);
  for (;;) {
    if (co_await AwaitChange(seen, std::min(Clock::now() + slice, deadline))) {
      // The watch's event carries the answer; a watch that ended is read instead.
      const WatchedChange* change = ChangeOf(key);
      int64_t revision = change != nullptr ? change->revision : 0;
      std::optional<std::string> value = change != nullptr ? change->value : std::nullopt;
      int64_t read_at = revision;
      if (revision <= seen) {
        etcd::RangeResult range = co_await link_->client().Range(key);
        read_at = range.revision;  // a watch that ended starts again from there
        revision = range.kvs.empty() ? range.revision : range.kvs.front().mod_revision;
        value = range.kvs.empty() ? std::nullopt : std::optional(range.kvs.front().value);
      }
      seen = std::max(seen, read_at);
      // Its own revision: the epoch key may have moved since, and the participant's watch
      // replays that.
      if (value) {
        if (auto answer = AnswerOf(*value, attempt)) co_return std::pair(*answer, revision);
      }
      continue;
    }
    if (Clock::now() >= deadline) co_return std::nullopt;
    const int64_t summary = co_await Admit();  // the holder may have died: its key is gone then
    if (summary != summary_seen) moved_at = Clock::now();
    summary_seen = summary;
    if (Clock::now() - moved_at >= stuck_after) co_return std::nullopt;
  }
}

Rendezvous::Task<std::optional<RendezvousResult>> EtcdRendezvous::AwaitCompletion(
    const JoinAnswer& answer, int64_t answer_revision, Clock::time_point deadline) {
  // A participant keeps watching its inbox (etcd_keys.h): an epoch step of its round (its last
  // call armed, the job closed) comes as the summary as of the step, and the completion as this
  // agent's assignment, so that neither costs it a request. A wake-up the watch did not
  // cause (a progress line, the last call's expiry, a watch that ended) reads the summary key;
  // when the last call expires, the admitting agent completes the round for everybody. Anything
  // else hands over to the loop. At 4,000 agents the waiting agents' reads, every progress
  // interval, were what starved etcd (two per agent, now one at the pace of ProgressPace).
  int64_t seen = answer_revision;
  int64_t last_call_ms = answer.last_call_deadline_ms;
  std::optional<Clock::time_point> complete_seen;
  for (;;) {
    const int64_t wake_at_ms = last_call_ms != 0 ? last_call_ms + 1 : 0;
    auto until = WakeTime(deadline, next_progress_, wake_at_ms, Clock::now(), WallMs());
    if (complete_seen) until = std::min(until, *complete_seen + kAssignmentWait);
    const bool moved = co_await AwaitChange(seen, until);
    std::string error;
    std::optional<StateSummary> summary;
    if (moved && latest_change_ > seen) {
      seen = latest_change_;
      const std::string& id = settings_.self.node_id;
      if (const WatchedChange* assigned = ChangeOf(link_->keys().Assignment(id));
          assigned != nullptr && assigned->value) {
        if (auto published = AssignmentOfRound(*assigned->value, answer.round)) {
          StopWatch();
          co_return co_await Finish(*published);  // its nullopt hands over too
        }
      }
      const WatchedChange* step = ChangeOf(link_->keys().EpochStep(id));
      // Nothing but this join's answer again: not news.
      if (step == nullptr || !step->value) continue;
      summary = DecodeSummary(*step->value, &error);
    } else {
      etcd::RangeResult range = co_await link_->client().Range(link_->keys().Summary());
      if (!range.kvs.empty()) summary = DecodeSummary(range.kvs.front().value, &error);
      // The completion's assignments are written after its state: a summary that is not complete
      // yet comes before them, and a watch that ended starts again from here.
      if (summary && !summary->state.complete) seen = std::max(seen, range.revision);
    }
    if (!summary || summary->state.round != answer.round || summary->state.closed) break;
    if (summary->state.complete || complete_seen) {
      if (auto assignment = co_await ReadAssignment(answer.round)) {
        StopWatch();
        co_return co_await Finish(*assignment);  // its nullopt hands over too
      }
      // The publisher is writing the assignments; if it died, the loop publishes them.
      if (!complete_seen) complete_seen = Clock::now();
      if (Clock::now() - *complete_seen >= kAssignmentWait) break;
    }
    if (Clock::now() >= deadline) break;  // the loop leaves and says why
    if (complete_seen) continue;
    last_call_ms = summary->state.last_call_deadline_ms;
    if (Clock::now() >= next_progress_) {
      ReportProgress(summary->state, deadline, summary->joined);
      next_progress_ = Clock::now() + ProgressPace();
    }
    if (last_call_ms != 0 && WallMs() >= last_call_ms) {
      co_await Admit();
      // Then woken by the completion (its assignment) or, should the holder of the key die
      // before it completes the round, by the next progress line, which reads the summary again.
      last_call_ms = 0;
    }
  }
  StopWatch();
  co_return std::nullopt;
}

Rendezvous::Task<int64_t> EtcdRendezvous::Admit() {
  const EtcdKeys& keys = link_->keys();
  const std::string& me = settings_.self.node_id;
  for (;;) {
    // One request: the key if it is free, else the summary's revision (the admission's pulse).
    std::vector<etcd::Compare> claim{etcd::Compare::Absent(keys.Admitter())};
    std::vector<etcd::TxnOp> take{etcd::TxnOp::Put(keys.Admitter(), me, link_->lease())};
    std::vector<etcd::TxnOp> pulse{etcd::TxnOp::Range(keys.Summary())};
    etcd::TxnResult claimed =
        co_await link_->client().Txn(std::move(claim), std::move(take), std::move(pulse));
    if (!claimed.succeeded) {
      const auto& ranges = claimed.ranges;
      co_return ranges.empty() || ranges.front().kvs.empty()
          ? 0
          : ranges.front().kvs.front().mod_revision;
    }
    // Freed after the queue is drained, or when admitting failed (etcd refused or did not
    // answer), for the next queued agent to take, while it is still this agent's (a lapsed lease
    // may have let another take it).
    std::exception_ptr failure;
    std::string etcd_failure;
    try {
      co_await AdmitUntilDrained();
    } catch (const etcd::EtcdError& error) {
      etcd_failure = error.what();
    } catch (...) {
      failure = std::current_exception();
    }
    std::vector<etcd::Compare> mine{
        etcd::Compare::Value(keys.Admitter(), etcd::Compare::Op::kEqual, me)};
    std::vector<etcd::TxnOp> release{etcd::TxnOp::Delete(keys.Admitter())};
    try {
      co_await link_->client().Txn(std::move(mine), std::move(release), {});
    } catch (const etcd::EtcdError&) {
      if (!failure && etcd_failure.empty()) throw;
    }
    if (failure) std::rethrow_exception(failure);
    if (!etcd_failure.empty()) {
      // etcd overloaded (a request unanswered for its whole timeout) fails the admission, not
      // this agent's join: whoever asks for the key next tries again. A summary that stops
      // moving meanwhile hands the queued agents over to the decide-join loop.
      if (settings_.trace) settings_.trace("rendezvous: admission stopped: " + etcd_failure);
      co_return 0;
    }
    // An agent that queued after the last batch and tried the key before it was freed would
    // wait for an answer that nobody gives: look once more, now that the key is free.
    std::string joins = keys.Joins();
    std::string end = etcd::PrefixEnd(joins);
    if ((co_await link_->client().Range(std::move(joins), std::move(end))).kvs.empty()) {
      co_return -1;
    }
  }
}

Rendezvous::Task<void> EtcdRendezvous::AdmitUntilDrained() {
  Snapshot snapshot = co_await Read();
  for (;;) {
    std::string joins = link_->keys().Joins();
    std::string end = etcd::PrefixEnd(joins);
    etcd::RangeResult queued = co_await link_->client().Range(std::move(joins), std::move(end));
    const bool drained = queued.kvs.empty();
    co_await AdmitQueued(&snapshot, std::move(queued.kvs));
    if (drained) co_return;
  }
}

// Batches in arrival order; each is one transaction on the state. With nothing queued, the
// participants' last call may have expired: the round is completed once for all of them.
Rendezvous::Task<void> EtcdRendezvous::AdmitQueued(Snapshot* snapshot,
                                                   std::vector<etcd::KeyValue> joins) {
  if (joins.empty()) {
    for (;;) {
      if (!snapshot->state) co_return;
      const auto completed = CompletedAtLastCall(*snapshot->state, WallMs());
      if (!completed) co_return;
      if (co_await DropDeadParticipants(snapshot, *completed)) continue;
      if (co_await Write(snapshot, *completed)) co_return;
    }
  }
  std::sort(joins.begin(), joins.end(), [](const etcd::KeyValue& a, const etcd::KeyValue& b) {
    return a.mod_revision < b.mod_revision;
  });
  std::vector<QueuedJoin> pending;
  for (const auto& kv : joins) {
    std::string error;
    auto parsed = ParseJoinQueue(kv.value, 0, &error);
    if (!parsed || parsed->size() != 1) {
      throw Error("unreadable queued join " + kv.key + ": " + (error.empty() ? "no line" : error));
    }
    pending.push_back(std::move(parsed->front()));
  }
  for (size_t first = 0; first < pending.size();) {
    const auto from = pending.begin() + static_cast<std::ptrdiff_t>(first);
    const std::vector<QueuedJoin> batch(
        from, from + static_cast<std::ptrdiff_t>(std::min(kBatch, pending.size() - first)));
    std::vector<JoinRequest> requests;
    requests.reserve(batch.size());
    for (const QueuedJoin& join : batch) requests.push_back(join.request);
    const Admission admission = AdmitJoins(snapshot->state, requests, WallMs());
    const std::vector<std::string> ids =
        NodesToConfirm(snapshot->state, admission.next, settings_.self.node_id);
    if (!ids.empty()) {
      // A participant, spare or queued agent that died since: the first two leave the state,
      // the last the queue (its request went with its lease), and the batch is tried again.
      const std::vector<std::string> gone = co_await DeadAmong(ids);
      if (!gone.empty()) {
        std::erase_if(pending, [&](const QueuedJoin& join) {
          return std::find(gone.begin(), gone.end(), join.request.node_id) != gone.end();
        });
        co_await DropDead(snapshot, gone);
        continue;
      }
    }
    const int64_t epoch_before = snapshot->state ? snapshot->state->epoch : 0;
    const RendezvousState& next = admission.next;
    std::vector<etcd::TxnOp> answers;
    for (size_t i = 0; i < batch.size(); ++i) {
      const JoinAnswer answer{admission.admitted[i], next.round, epoch_before,
                              next.last_call_deadline_ms};
      const std::string& id = batch[i].request.node_id;
      answers.push_back(etcd::TxnOp::Delete(link_->keys().Join(id)));
      answers.push_back(
          etcd::TxnOp::Put(link_->keys().Answer(id), AnswerValue(batch[i].attempt, answer)));
    }
    if (!co_await Write(snapshot, next, &answers)) continue;  // the batch again, on the new state
    if (settings_.trace) settings_.trace("rendezvous: " + AdmissionLine(admission));
    first += batch.size();
  }
}

Rendezvous::Task<void> EtcdRendezvous::PublishRound(const RendezvousState& state) {
  std::string nodes = link_->keys().Nodes();
  std::string end = etcd::PrefixEnd(nodes);
  etcd::RangeResult range = co_await link_->client().Range(std::move(nodes), std::move(end));
  std::map<std::string, std::string> records;
  for (auto& kv : range.kvs) records[link_->keys().NodeIdOf(kv.key)] = std::move(kv.value);
  // A member whose record is gone counts its last known size as 1: its peers find it missing
  // and end the round before anybody's workers start.
  std::vector<int> local_world_sizes;
  const std::vector<std::string> order = GroupOrder(state);
  for (const auto& id : order) {
    auto found = records.find(id);
    int size = 1;
    if (found != records.end()) {
      std::string error;
      auto node = NodeInfo::Decode(found->second, &error);
      if (!node) throw Error("unreadable node record of " + id + ": " + std::move(error));
      size = node->local_world_size;
    }
    local_world_sizes.push_back(size);
  }
  const std::vector<RoundAssignment> assignments = AssignRound(state, local_world_sizes);
  // Each value carries its peers' records (etcd_assignment.h) and goes to the member's inbox,
  // which it watches (etcd_keys.h).
  std::vector<etcd::TxnOp> puts;
  for (size_t i = 0; i < assignments.size(); ++i) {
    puts.push_back(
        etcd::TxnOp::Put(link_->keys().Assignment(order[i]),
                         EncodePublishedAssignment(assignments[i], range.revision, records)));
  }
  co_await PutAll(std::move(puts));
}

Rendezvous::Task<void> EtcdRendezvous::AnnounceEpochStep(const RendezvousState& state,
                                                         const std::vector<etcd::TxnOp>* extra) {
  // The participants answered by the same write carry the step in their answers already.
  std::set<std::string> answered;
  if (extra != nullptr) {
    for (const auto& op : *extra) answered.insert(op.key);
  }
  const std::string value = EncodeSummary(state);
  std::vector<etcd::TxnOp> puts;
  for (const auto& id : state.participants) {
    if (answered.count(link_->keys().Answer(id)) == 0) {
      puts.push_back(etcd::TxnOp::Put(link_->keys().EpochStep(id), value));
    }
  }
  co_await PutAll(std::move(puts));
}

Rendezvous::Task<void> EtcdRendezvous::PutAll(std::vector<etcd::TxnOp> puts) {
  std::vector<etcd::TxnOp> batch;
  size_t bytes = 0;
  for (size_t i = 0; i < puts.size(); ++i) {
    bytes += puts[i].value.size();
    batch.push_back(std::move(puts[i]));
    if (batch.size() == kPutsPerTxn || bytes >= kBytesPerTxn || i + 1 == puts.size()) {
      co_await link_->client().Txn({}, std::move(batch), {});
      batch.clear();
      bytes = 0;
    }
  }
}

Rendezvous::Task<std::optional<PublishedAssignment>> EtcdRendezvous::ReadAssignment(int64_t round) {
  etcd::RangeResult range =
      co_await link_->client().Range(link_->keys().Assignment(settings_.self.node_id));
  if (range.kvs.empty()) co_return std::nullopt;
  co_return AssignmentOfRound(range.kvs.front().value, round);
}

std::optional<PublishedAssignment> EtcdRendezvous::AssignmentOfRound(std::string_view value,
                                                                     int64_t round) const {
  std::string error;
  auto published = DecodePublishedAssignment(value, &error);
  if (!published) {
    throw Error("unreadable assignment in round " + std::to_string(round) + ": " + error);
  }
  if (published->assignment.round != round) return std::nullopt;
  return published;
}

Rendezvous::Task<PublishedAssignment> EtcdRendezvous::AssignmentIn(const RendezvousState& state) {
  if (auto published = co_await ReadAssignment(state.round)) co_return *published;
  co_await PublishRound(state);  // the agent that completed the round died before it did
  if (auto published = co_await ReadAssignment(state.round)) co_return *published;
  throw Error("round " + std::to_string(state.round) + " completed without this agent's place");
}

Rendezvous::Task<std::optional<RendezvousResult>> EtcdRendezvous::Finish(
    const PublishedAssignment& published) {
  StopWatch();
  const RoundAssignment& assignment = published.assignment;
  // The peers' records as the publisher read them, or, from a value without them, read now in one
  // request at one revision: the round's channel watches for their departure from the next one.
  std::map<std::string, std::string> records = published.records;
  int64_t revision = published.records_revision;
  if (revision == 0) {
    std::vector<etcd::TxnOp> reads;
    for (const auto& [rank, id] : assignment.peers) {
      reads.push_back(etcd::TxnOp::Range(link_->keys().Node(id)));
    }
    etcd::TxnResult read = co_await link_->client().Txn({}, std::move(reads), {});
    for (size_t i = 0; i < assignment.peers.size() && i < read.ranges.size(); ++i) {
      if (read.ranges[i].kvs.empty()) continue;
      records[assignment.peers[i].second] = std::move(read.ranges[i].kvs.front().value);
    }
    revision = read.revision;
  }
  RendezvousResult result = ResultWithoutMembers(assignment);
  for (const auto& [rank, id] : assignment.peers) {
    const auto found = records.find(id);
    if (found == records.end()) {
      if (id == settings_.self.node_id) throw Error("this agent's etcd lease expired");
      RoundEnd notice;
      notice.kind = RoundEndKind::kPeerLost;
      notice.host = id;
      notice.node_rank = rank;
      notice.detail = "its etcd lease expired before round " + std::to_string(assignment.round) +
                      " started, noticed by " + settings_.self.Label();
      RoundEnd winner = co_await link_->EndRound(assignment.round, notice);
      if (settings_.progress) {
        settings_.progress("round " + std::to_string(assignment.round) +
                           " ended before it started (" + winner.Describe() +
                           "); joining the next one");
      }
      co_return std::nullopt;
    }
    std::string error;
    auto node = NodeInfo::Decode(found->second, &error);
    if (!node) throw Error("unreadable node record of " + id + ": " + std::move(error));
    result.members.push_back(RoundPeer{rank, std::move(*node), link_->keys().Node(id)});
  }
  if (result.self().node_id != settings_.self.node_id) {
    throw Error("round " + std::to_string(result.round) + " gave this agent's place to " +
                result.self().node_id);
  }
  link_->round_revision = revision;
  result.master_addr = result.Member(0).node.addr;
  result.master_port = result.Member(0).node.worker_store_port;
  co_return result;
}

}  // namespace cpplaunch
