#include "rendezvous/etcd/etcd_rendezvous.h"

#include <algorithm>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <set>

#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/core/join_steps.h"
#include "rendezvous/core/node_id.h"
#include "rendezvous/core/quarantine.h"
#include "rendezvous/core/seats.h"

namespace cpplaunch {
namespace asio = boost::asio;

namespace {

constexpr auto kRetryPause = std::chrono::milliseconds(500);

// The address of the interface that routes to etcd: a connected UDP socket sends nothing but
// knows its local address, as the c10d backend knows it from its TCP connection to the store.
asio::awaitable<std::string> LocalAddressToward(const etcd::Endpoint& endpoint) {
  auto executor = co_await asio::this_coro::executor;
  asio::ip::udp::resolver resolver(executor);
  const std::string port = std::to_string(endpoint.port);
  auto results = co_await resolver.async_resolve(endpoint.host, port, asio::use_awaitable);
  asio::ip::udp::socket socket(executor);
  const auto& remote = results.begin()->endpoint();
  socket.open(remote.protocol());
  socket.connect(remote);
  co_return socket.local_endpoint().address().to_string();
}

}  // namespace

EtcdRendezvous::EtcdRendezvous(const asio::any_io_executor& executor, RendezvousSettings settings,
                               std::shared_ptr<EtcdLink> link)
    : settings_(std::move(settings)), link_(std::move(link)), wake_(executor) {}

EtcdRendezvous::~EtcdRendezvous() {
  *alive_ = false;
  StopWatch();
}

RendezvousError EtcdRendezvous::Error(const std::string& what) const {
  return RendezvousError("rendezvous of job '" + settings_.run_id + "' through etcd at " +
                         link_->Endpoints() + " from " + settings_.self.Label() + ": " + what);
}

// An etcd that stops answering while the agent waits (a restarting member, one overloaded by
// thousands of agents) is waited for until the join deadline, as at the first contact, and the
// join starts again: a node asking again is let in where it already is (AdmitJoins).
Rendezvous::Task<RendezvousResult> EtcdRendezvous::Next(std::optional<RoundTransition> previous) {
  const auto started = Clock::now();
  const auto deadline = started + settings_.join_timeout;
  auto next_line = started + settings_.progress_interval;
  bool waited = false;  // this host waited for a place: a spare, when the job then finishes
  for (;;) {
    std::string why;
    try {
      co_return co_await Join(previous, started, deadline, &waited);
    } catch (const etcd::EtcdError& error) {
      StopWatch();
      if (!error.unreachable() || Clock::now() + kRetryPause >= deadline) throw Error(error.what());
      why = error.what();
    } catch (...) {
      StopWatch();
      throw;
    }
    co_await PauseAfter(why, "joining again", deadline, &next_line);
  }
}

Rendezvous::Task<RendezvousResult> EtcdRendezvous::Join(
    const std::optional<RoundTransition>& previous, Clock::time_point started,
    Clock::time_point deadline, bool* waited) {
  co_await Connect(deadline);
  if (link_->lease_lost()) throw Error("this agent's etcd lease expired");
  RefreshSelf();
  JoinRequest me = JoinRequestFor(settings_, previous);
  next_progress_ = Clock::now() + ProgressPace();
  if (auto queued = co_await JoinThroughQueue(me, deadline)) co_return std::move(*queued);
  Snapshot snapshot = co_await Read();
  Watch(link_->keys().State(), "", snapshot.revision + 1);
  for (;;) {
    JoinDecision decision = DecideJoin(snapshot.state, me, WallMs());
    if (settings_.trace) settings_.trace("rendezvous: " + JoinStepLine(decision));
    switch (decision.action) {
      case JoinAction::kWrite:
        if (co_await DropDeadParticipants(&snapshot, decision.next)) break;
        if (co_await Write(&snapshot, decision.next) && decision.next.IsWaiting(me.node_id)) {
          co_await AnnounceWaiting(decision.next);
        }
        break;
      case JoinAction::kDone:
        if (auto result = co_await Finish(co_await AssignmentIn(decision.next))) {
          co_return std::move(*result);
        }
        // A member died before the round started: it ended, and this agent asks for the next.
        me.min_round = decision.next.round + 1;
        me.restart_count = std::max(me.restart_count, decision.next.restart_count + 1);
        snapshot = co_await Read();
        break;
      case JoinAction::kClosed:
        if (*waited && decision.message == kJobFinished) throw NotNeeded(settings_);
        // The closed state outlives the job in etcd: say how to start anew.
        throw Error("its rendezvous is closed (" + decision.message +
                    "); give the new job another --rdzv-id, or clear the old one: " +
                    link_->keys().ClearCommand(link_->Endpoints()));
      case JoinAction::kQuarantined:
        throw SetAsideError(settings_, decision);
      case JoinAction::kMismatch:
        co_await RefuseMismatch(&snapshot, decision);  // throws
        break;
      case JoinAction::kWait:
        *waited = true;
        if (Clock::now() >= deadline) {
          co_await Leave(snapshot);
          throw Error("timed out " + JoinTimeoutDetail(snapshot.state, Clock::now() - started,
                                                       settings_.min_nodes, settings_.max_nodes));
        }
        co_await WaitForNews(&snapshot, decision, deadline);
        break;
    }
  }
}

// The first contact: the lease, retried while no member answers (a cluster still starting),
// with progress lines, until the join deadline.
Rendezvous::Task<void> EtcdRendezvous::Connect(Clock::time_point deadline) {
  if (connected_) co_return;
  auto next_line = Clock::now() + settings_.progress_interval;
  for (;;) {
    std::string why;
    try {
      co_await link_->EnsureLease();
      break;
    } catch (const etcd::EtcdError& error) {
      if (!error.unreachable() || Clock::now() + kRetryPause >= deadline) {
        throw Error(std::string("cannot reach etcd: ") + error.what());
      }
      why = error.what();
    }
    co_await PauseAfter(why, "retrying", deadline, &next_line);
  }
  NodeInfo& self = settings_.self;
  if (self.addr.empty()) {
    self.addr = co_await LocalAddressToward(link_->settings().client.endpoints.front());
  }
  self.node_id = WithAddress(self.node_id, self.addr);
  connected_ = true;
}

// The record is written anew before every round: it carries the port this agent offers for the
// round's workers' store, fresh each round. It is written with the queued join (JoinThroughQueue),
// one transaction for both.
void EtcdRendezvous::RefreshSelf() {
  NodeInfo& self = settings_.self;
  const auto& offer = link_->settings().offer_store_port;
  self.worker_store_port = offer ? offer() : 0;
  if (settings_.status_address) self.status = settings_.status_address(self.addr);
}

Rendezvous::Task<EtcdRendezvous::Snapshot> EtcdRendezvous::Read() {
  std::string key = link_->keys().State();
  etcd::RangeResult range = co_await link_->client().Range(std::move(key));
  if (range.kvs.empty()) co_return SnapshotOf(std::nullopt, 0, range.revision);
  co_return SnapshotOf(range.kvs.front().value, range.kvs.front().mod_revision, range.revision);
}

EtcdRendezvous::Snapshot EtcdRendezvous::SnapshotOf(const std::optional<std::string>& value,
                                                    int64_t mod_revision, int64_t revision) const {
  Snapshot snapshot;
  snapshot.revision = revision;
  if (!value) return snapshot;
  std::string error;
  snapshot.state = RendezvousState::Decode(*value, &error);
  if (!snapshot.state) throw Error("unreadable rendezvous state: " + error);
  snapshot.mod_revision = mod_revision;
  return snapshot;
}

// One transaction: store `next` if the state is still the one read (its mod_revision, or its
// absence), else read the current one.
Rendezvous::Task<bool> EtcdRendezvous::Write(Snapshot* snapshot, const RendezvousState& next,
                                             const std::vector<etcd::TxnOp>* extra) {
  const EtcdKeys& keys = link_->keys();
  const std::string key = keys.State();
  std::vector<etcd::Compare> compare{
      snapshot->mod_revision == 0
          ? etcd::Compare::Absent(key)
          : etcd::Compare::ModRevision(key, etcd::Compare::Op::kEqual, snapshot->mod_revision)};
  std::vector<etcd::TxnOp> success{etcd::TxnOp::Put(key, next.Encode()),
                                   etcd::TxnOp::Put(keys.Summary(), EncodeSummary(next))};
  const bool completes =
      next.complete && !next.closed &&
      (!snapshot->state || !snapshot->state->complete || snapshot->state->round != next.round);
  const bool epoch_step = !completes && (!snapshot->state || snapshot->state->epoch != next.epoch);
  if (extra != nullptr) success.insert(success.end(), extra->begin(), extra->end());
  std::vector<etcd::TxnOp> failure{etcd::TxnOp::Range(key)};
  etcd::TxnResult result =
      co_await link_->client().Txn(std::move(compare), std::move(success), std::move(failure));
  if (result.succeeded) {
    snapshot->revision = result.revision;
    snapshot->state = next;
    snapshot->mod_revision = result.revision;
  } else {
    const etcd::KeyValue* kv = result.ranges.empty() || result.ranges.front().kvs.empty()
                                   ? nullptr
                                   : &result.ranges.front().kvs.front();
    *snapshot = SnapshotOf(kv != nullptr ? std::optional(kv->value) : std::nullopt,
                           kv != nullptr ? kv->mod_revision : 0, result.revision);
    // The client sends a transaction again when etcd answered its first attempt too late: the
    // state found is then this very write (every write bumps the version), done once.
    if (snapshot->state != next) co_return false;
  }
  // The waiting participants hear of it in their inboxes (etcd_keys.h), after the state:
  // should this agent die in between, their next progress line reads the summary.
  if (completes) co_await PublishRound(next);
  if (epoch_step) co_await AnnounceEpochStep(next, extra);
  co_return true;
}

Rendezvous::Task<bool> EtcdRendezvous::DropDeadParticipants(Snapshot* snapshot,
                                                            const RendezvousState& next) {
  const std::vector<std::string> ids =
      NodesToConfirm(snapshot->state, next, settings_.self.node_id);
  if (ids.empty()) co_return false;
  const std::vector<std::string> gone = co_await DeadAmong(ids);
  if (gone.empty()) co_return false;
  co_await DropDead(snapshot, gone);
  co_return true;
}

Rendezvous::Task<std::vector<std::string>> EtcdRendezvous::DeadAmong(
    const std::vector<std::string>& ids) {
  std::string nodes = link_->keys().Nodes();
  std::string end = etcd::PrefixEnd(nodes);
  etcd::RangeResult range = co_await link_->client().Range(std::move(nodes), std::move(end));
  std::set<std::string> present;
  for (const auto& kv : range.kvs) present.insert(link_->keys().NodeIdOf(kv.key));
  std::vector<std::string> gone;
  for (const auto& id : ids) {
    if (id != settings_.self.node_id && !present.count(id)) gone.push_back(id);
  }
  co_return gone;
}

Rendezvous::Task<void> EtcdRendezvous::DropDead(Snapshot* snapshot,
                                                const std::vector<std::string>& gone) {
  if (!snapshot->state) co_return;
  std::vector<std::string> known;
  for (const auto& id : gone) {
    const bool spare = IsSpare(*snapshot->state, id);  // goes silently (quarantine.h)
    if (snapshot->state->RankOf(id) < 0 && !snapshot->state->IsWaiting(id) && !spare) continue;
    known.push_back(id);
    if (settings_.progress && !spare) {
      settings_.progress(
          LeftBeforeCompletionLine(id, snapshot->state->round, "its etcd lease expired"));
    }
  }
  if (!known.empty()) co_await Write(snapshot, WithoutNodes(*snapshot->state, known));
}

// Ends the running round for the waiting host (join_steps.h: MembershipChangeNotice).
Rendezvous::Task<void> EtcdRendezvous::AnnounceWaiting(const RendezvousState& state) {
  const RoundEnd notice = MembershipChangeNotice(settings_.self, state);
  co_await link_->EndRound(state.round, notice);
  if (settings_.progress) settings_.progress(RestartAskedLine(settings_.run_id, state));
}

// As with c10d: the rendezvous is closed with the mismatch, and a running round is told
// (join_steps.h: RefusalOf).
Rendezvous::Task<void> EtcdRendezvous::RefuseMismatch(Snapshot* snapshot,
                                                      const JoinDecision& decision) {
  const Refusal refusal = RefusalOf(settings_.self, decision);
  co_await Write(snapshot, refusal.closed);
  if (refusal.notice) co_await link_->EndRound(decision.next.round, *refusal.notice);
  throw RendezvousError(refusal.message);
}

void EtcdRendezvous::Watch(std::string key, std::string range_end, int64_t from_revision) {
  watch_.reset();
  watched_key_ = key;
  watched_end_ = range_end;
  watch_ended_ = false;
  latest_change_ = 0;
  changes_.clear();
  auto alive = alive_;
  watch_ = etcd::StartWatch(
      link_->client(), std::move(key), std::move(range_end), from_revision,
      [this, alive](const std::vector<etcd::WatchEvent>& events) {
        if (!*alive) return;
        for (const auto& event : events) {
          WatchedChange& change = changes_[event.kv.key];
          if (event.kv.mod_revision < change.revision) continue;
          change.revision = event.kv.mod_revision;
          change.value.reset();
          if (event.kind == etcd::WatchEvent::kPut) change.value = event.kv.value;
          latest_change_ = std::max(latest_change_, change.revision);
        }
        wake_.cancel();
      },
      [this, alive](const std::string&) {
        if (!*alive) return;
        watch_ended_ = true;  // compacted or every member lost: re-read, then watch again
        wake_.cancel();
      });
}

const EtcdRendezvous::WatchedChange* EtcdRendezvous::ChangeOf(const std::string& key) const {
  const auto found = changes_.find(key);
  return found == changes_.end() ? nullptr : &found->second;
}

void EtcdRendezvous::StopWatch() {
  watch_.reset();
  watch_ended_ = true;
}

Rendezvous::Task<bool> EtcdRendezvous::AwaitChange(int64_t seen, Clock::time_point until) {
  if (watch_ended_) {
    // What the ended watch may have missed is read by the caller next: watch from there on.
    Watch(watched_key_, watched_end_, seen + 1);
    co_return true;
  }
  if (latest_change_ <= seen && Clock::now() < until) co_await SleepUntil(until);
  co_return latest_change_ > seen;
}

Rendezvous::Task<void> EtcdRendezvous::PauseAfter(const std::string& why, const char* next_step,
                                                  Clock::time_point deadline,
                                                  Clock::time_point* next_line) {
  if (Clock::now() >= *next_line && settings_.progress) {
    settings_.progress("cannot reach etcd at " + link_->Endpoints() + " (" + why + "); " +
                       next_step + " for " + FormatSeconds(deadline - Clock::now()));
    *next_line = Clock::now() + settings_.progress_interval;
  }
  co_await SleepUntil(Clock::now() + kRetryPause);
}

Rendezvous::Task<void> EtcdRendezvous::SleepUntil(Clock::time_point until) {
  wake_.expires_at(until);
  boost::system::error_code ignored;  // cancelled: woken early, which the caller checks
  co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

// Waits for a change of the state (the watch), the decision's wake-up time (last call) or the
// next progress line, whichever comes first. The watch's event carries the new state: with
// thousands of agents in this loop, reading it again after each change cost etcd one range of
// the whole state per agent and change, on top of the events.
Rendezvous::Task<void> EtcdRendezvous::WaitForNews(Snapshot* snapshot, const JoinDecision& decision,
                                                   Clock::time_point deadline) {
  const int64_t seen = std::max(snapshot->mod_revision, snapshot->revision);
  // An ended watch starts again from `seen` on: the read below moves `seen` past whatever it may
  // have missed (a compacted revision would otherwise end every new watch at once).
  const bool ended = watch_ended_;
  co_await AwaitChange(
      seen, WakeTime(deadline, next_progress_, decision.wake_at_ms, Clock::now(), WallMs()));
  if (Clock::now() >= next_progress_) {
    ReportProgress(decision.next, deadline);
    next_progress_ = Clock::now() + ProgressPace();
  }
  if (ended) {
    *snapshot = co_await Read();
    co_return;
  }
  const WatchedChange* change = ChangeOf(link_->keys().State());
  if (change == nullptr || change->revision <= seen) co_return;  // a wake-up: the state as read
  *snapshot = SnapshotOf(change->value, change->revision, change->revision);
}

Rendezvous::Task<void> EtcdRendezvous::Leave(Snapshot snapshot) {
  try {
    for (int attempt = 0; attempt < 5 && snapshot.state; ++attempt) {
      const auto without = LeavingState(*snapshot.state, settings_.self.node_id);
      if (!without || co_await Write(&snapshot, *without)) co_return;
    }
  } catch (const std::exception&) {
    // Leaving is a courtesy to the others; the timeout is what this host reports.
  }
}

EtcdRendezvous::Clock::duration EtcdRendezvous::HerdPace() const {
  return std::chrono::milliseconds(1000) * settings_.max_nodes / kProgressReadsPerSecond;
}

EtcdRendezvous::Clock::duration EtcdRendezvous::ProgressPace() const {
  return std::max<Clock::duration>(settings_.progress_interval, HerdPace());
}

void EtcdRendezvous::ReportProgress(const RendezvousState& state, Clock::time_point deadline,
                                    int joined) {
  if (!settings_.progress) return;
  const std::string where = "etcd at " + link_->Endpoints();
  settings_.progress(
      ProgressLine(state, settings_, where, deadline - Clock::now(), WallMs(), joined));
}

Rendezvous::Task<void> EtcdRendezvous::Close(std::string reason) {
  const auto deadline = Clock::now() + settings_.close_timeout;
  try {
    while (connected_ && Clock::now() < deadline) {
      Snapshot snapshot = co_await Read();
      if (!snapshot.state || snapshot.state->closed) co_return;
      const RendezvousState closed = Closed(*snapshot.state, reason);
      if (co_await Write(&snapshot, closed)) co_return;
    }
  } catch (const std::exception&) {
    // Best effort: the job is over either way.
  }
}

Rendezvous::Task<void> EtcdRendezvous::Disarm() { co_await link_->RevokeLease(); }

void EtcdRendezvous::Cancel() {
  StopWatch();
  wake_.cancel();
  link_->Close();
}

}  // namespace cpplaunch
