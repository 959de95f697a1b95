#include "rendezvous/etcd/etcd_job_channel.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <set>
#include <utility>

#include "etcd_client/etcd_error.h"
#include "rendezvous/store/client/store.h"

namespace cpplaunch {
namespace asio = boost::asio;

namespace {

// etcd answered, refusing a write (issue 23: out of space, its quota reached): what it said, and
// the way out when it is the space. Empty when etcd did not answer (unreachable: it is gone).
std::string EtcdRefusal(const std::exception& error) {
  const auto* etcd_error = dynamic_cast<const etcd::EtcdError*>(&error);
  if (etcd_error == nullptr || etcd_error->unreachable() ||
      etcd_error->kind() == etcd::EtcdError::Kind::kClosed) {
    return "";
  }
  std::string text = "etcd refused to record it: " + std::string(error.what());
  if (text.find("space exceeded") != std::string::npos) {
    text +=
        " (the etcd cluster is out of space: compact and defragment it and disarm the NOSPACE "
        "alarm with etcdctl, or raise its --quota-backend-bytes)";
  }
  return text;
}

}  // namespace

struct EtcdJobChannel::State : std::enable_shared_from_this<State> {
  State(asio::any_io_executor ex, std::shared_ptr<EtcdLink> l, RendezvousResult r,
        EndHandler handler)
      : executor(std::move(ex)),
        link(std::move(l)),
        round(std::move(r)),
        on_end(std::move(handler)),
        barrier_timer(executor) {}

  asio::any_io_executor executor;
  std::shared_ptr<EtcdLink> link;
  RendezvousResult round;
  EndHandler on_end;
  std::unique_ptr<etcd::Watch> watch;
  asio::steady_timer barrier_timer;
  std::set<int> arrived;  // group ranks at the exit barrier
  bool ended = false;
  bool stopped = false;
  bool reporting = false;  // a lost peer's notice is on its way

  const EtcdKeys& keys() const { return link->keys(); }
  const NodeInfo& self() const { return round.self(); }
  bool barrier_passed() const {
    return static_cast<int>(arrived.size()) >= round.group_world_size();
  }

  void Deliver(const RoundEnd& notice) {
    if (ended || stopped) return;
    ended = true;
    if (watch) watch->Cancel();
    if (on_end) on_end(notice);
  }

  RoundEnd EtcdLost(const std::string& why) const {
    RoundEnd notice;
    notice.kind = RoundEndKind::kStoreLost;
    notice.host = self().hostname;
    notice.addr = self().addr;
    notice.node_rank = round.group_rank;
    notice.detail = "etcd at " + link->Endpoints() + " is gone (" + why + ")";
    return notice;
  }

  // Among the members this agent knows (the rendezvous lists its peers: round_assignment.h).
  int RankOf(const std::string& node_id) const {
    for (const RoundPeer& member : round.members) {
      if (member.node.node_id == node_id) return member.group_rank;
    }
    return -1;
  }

  // Watches every key of the job from `from_revision`: the end key, the members' records and
  // the round's barrier arrivals, in revision order.
  void WatchFrom(int64_t from_revision) {
    auto self_ref = shared_from_this();
    const std::string run = keys().Run();
    watch = etcd::StartWatch(
        link->client(), run, etcd::PrefixEnd(run), from_revision,
        [weak = std::weak_ptr<State>(self_ref)](const std::vector<etcd::WatchEvent>& events) {
          if (auto state = weak.lock()) state->OnEvents(events);
        },
        [weak = std::weak_ptr<State>(self_ref)](const std::string& why) {
          if (auto state = weak.lock()) state->OnWatchEnd(why);
        });
  }

  void OnEvents(const std::vector<etcd::WatchEvent>& events) {
    for (const auto& event : events) {
      if (ended || stopped) return;
      OnEvent(event);
    }
  }

  void OnEvent(const etcd::WatchEvent& event) {
    const std::string& key = event.kv.key;
    if (key == keys().End(round.round) && event.kind == etcd::WatchEvent::kPut) {
      std::string error;
      auto notice = RoundEnd::Decode(event.kv.value, &error);
      return Deliver(notice ? *notice : EtcdLost("unreadable round-end notice: " + error));
    }
    const std::string barrier = keys().Barrier(round.round);
    if (key.starts_with(barrier) && event.kind == etcd::WatchEvent::kPut) {
      arrived.insert(std::atoi(key.c_str() + barrier.size()));
      if (barrier_passed()) barrier_timer.cancel();
      return;
    }
    const int rank = RankOf(keys().NodeIdOf(key));
    if (event.kind == etcd::WatchEvent::kDelete && rank >= 0 && !barrier_passed()) {
      Spawn(ReportLost(rank));
    }
  }

  // The watch moves between members by itself; it ends only when compacted past the round's
  // revision or without any member: a re-read tells which, and a lost cluster ends the round.
  void OnWatchEnd(const std::string& why) {
    if (ended || stopped) return;
    Spawn(Resume(why));
  }

  asio::awaitable<void> Resume(std::string why) {
    auto self_ref = shared_from_this();
    try {
      co_await Check();
      if (!ended && !stopped) WatchFrom(link->round_revision + 1);
    } catch (const std::exception& error) {
      Deliver(EtcdLost(why + "; " + error.what()));
    }
  }

  // What the watch may have missed: the end notice, barrier arrivals, the listed members'
  // records; one transaction of reads (a few dozen keys: not every key of the job), whose
  // revision the watch then continues from.
  asio::awaitable<void> Check() {
    const std::string barrier = keys().Barrier(round.round);
    std::vector<etcd::TxnOp> reads{etcd::TxnOp::Range(keys().End(round.round)),
                                   etcd::TxnOp::Range(barrier, etcd::PrefixEnd(barrier))};
    for (const RoundPeer& member : round.members) {
      reads.push_back(etcd::TxnOp::Range(keys().Node(member.node.node_id)));
    }
    etcd::TxnResult read = co_await link->client().Txn({}, std::move(reads), {});
    if (read.ranges.size() != 2 + round.members.size()) {
      throw StoreError("etcd answered " + std::to_string(read.ranges.size()) + " of " +
                       std::to_string(2 + round.members.size()) + " reads");
    }
    for (size_t i = 0; i < 2; ++i) {
      for (const auto& kv : read.ranges[i].kvs) {
        etcd::WatchEvent event;
        event.kv = kv;
        OnEvent(event);
      }
    }
    link->round_revision = std::max(link->round_revision, read.revision);
    for (size_t i = 0; i < round.members.size() && !ended; ++i) {
      if (read.ranges[2 + i].kvs.empty() && !barrier_passed()) {
        co_await ReportLost(round.members[i].group_rank);
      }
    }
  }

  asio::awaitable<void> ReportLost(int rank) {
    auto self_ref = shared_from_this();
    if (reporting || ended || stopped) co_return;
    reporting = true;
    const NodeInfo& lost = round.Member(rank).node;
    RoundEnd notice;
    notice.kind = RoundEndKind::kPeerLost;
    notice.host = lost.hostname;
    notice.addr = lost.addr;
    notice.node_rank = rank;
    notice.detail = "its etcd lease expired (TTL " +
                    std::to_string(link->settings().lease_ttl.count()) + " s), noticed by " +
                    self().Label();
    try {
      Deliver(co_await link->EndRound(round.round, notice));
    } catch (const std::exception& error) {
      // etcd answered, so it is not gone: the lost peer stays the root cause here, with why the
      // others may not hear of it from etcd.
      const std::string refusal = EtcdRefusal(error);
      if (refusal.empty()) {
        Deliver(EtcdLost(error.what()));
      } else {
        notice.detail += "; " + refusal;
        Deliver(notice);
      }
    }
  }

  void Spawn(asio::awaitable<void> task) {
    asio::co_spawn(executor, std::move(task), asio::detached);
  }
};

EtcdJobChannel::EtcdJobChannel(asio::any_io_executor executor, std::shared_ptr<EtcdLink> link,
                               RendezvousResult round, EndHandler on_end)
    : state_(std::make_shared<State>(std::move(executor), std::move(link), std::move(round),
                                     std::move(on_end))) {}

EtcdJobChannel::~EtcdJobChannel() { Stop(); }

RoundChannel::Task<void> EtcdJobChannel::Start() {
  auto state = state_;
  std::weak_ptr<State> weak = state;
  state->link->OnLeaseLost([weak] {
    if (auto alive = weak.lock()) {
      alive->Deliver(alive->EtcdLost("this agent's lease expired: no member answered"));
    }
  });
  try {
    co_await state->Check();
  } catch (const etcd::EtcdError& error) {
    throw StoreError(error.what());
  }
  if (!state->ended && !state->stopped) state->WatchFrom(state->link->round_revision + 1);
}

RoundChannel::Task<RoundEnd> EtcdJobChannel::EndRound(RoundEnd notice) {
  auto state = state_;
  RoundEnd winner = co_await state->link->EndRound(state->round.round, notice);
  state->Deliver(winner);
  co_return winner;
}

RoundChannel::Task<bool> EtcdJobChannel::ExitBarrier(std::chrono::milliseconds timeout) {
  auto state = state_;
  const auto& keys = state->keys();
  std::string key = keys.Arrival(state->round.round, state->round.group_rank);
  std::string value = state->self().node_id;
  co_await state->link->client().Put(std::move(key), std::move(value), state->link->lease());
  if (!state->barrier_passed()) {
    state->barrier_timer.expires_after(timeout);
    boost::system::error_code ignored;
    co_await state->barrier_timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  if (state->stopped) throw StoreError("the job channel was stopped");
  co_return state->barrier_passed();
}

RoundChannel::Task<void> EtcdJobChannel::Depart(std::chrono::milliseconds) { co_return; }

void EtcdJobChannel::Stop() {
  state_->stopped = true;
  state_->barrier_timer.cancel();
  if (state_->watch) state_->watch->Cancel();
  state_->link->OnLeaseLost([] {});
}

bool EtcdJobChannel::ended() const { return state_->ended; }
const RendezvousResult& EtcdJobChannel::round() const { return state_->round; }

}  // namespace cpplaunch
