#include "rendezvous/c10d/job_channel.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <map>
#include <vector>

#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/core/round_assignment.h"
#include "rendezvous/store/client/async_store_client.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace asio = boost::asio;
using Clock = AsyncStoreClient::Clock;

namespace {

// Past AsyncStoreClient's one-year mark, which means no timeout: the WAIT then holds until the
// end key appears or Stop() closes the client, and no CANCEL_WAIT is ever sent.
constexpr auto kForever = std::chrono::hours(24 * 400);
constexpr auto kShortestTick = std::chrono::milliseconds(10);

}  // namespace

struct JobChannel::State : std::enable_shared_from_this<State> {
  State(asio::any_io_executor ex, Settings s, RendezvousResult r, EndHandler handler,
        std::unique_ptr<AsyncStoreClient> own_connection, AsyncStoreClient& connection)
      : executor(std::move(ex)),
        settings(std::move(s)),
        round(std::move(r)),
        on_end(std::move(handler)),
        own(std::move(own_connection)),
        watch(connection, settings.read_timeout),
        beat(connection, settings.heartbeat_timeout),
        control(connection, settings.read_timeout),
        tick_timer(executor) {}

  asio::any_io_executor executor;
  Settings settings;
  RendezvousResult round;
  EndHandler on_end;
  std::unique_ptr<AsyncStoreClient> own;  // the connection, when the channel opened its own
  // Three views of one connection, so that stopping the channel ends exactly its operations; the
  // beat view's timeout is heartbeat_timeout (a store that stops answering ends the round).
  AsyncStoreClient watch;    // the WAIT on the end key
  AsyncStoreClient beat;     // heartbeats and the others' counters
  AsyncStoreClient control;  // EndRound, ExitBarrier, Depart
  asio::steady_timer tick_timer;
  bool ended = false;
  bool stopped = false;
  bool judging_peers = true;  // off once the exit barrier passed: peers may leave then

  std::string RoundKey(const std::string& name) const {
    return rendezvous_keys::Round(settings.run_id, round.round) + name;
  }
  const NodeInfo& self() const { return round.self(); }

  // The watch, the heartbeats and EndRound may all see the same end; only the first is handed on.
  void Deliver(const RoundEnd& notice) {
    if (ended || stopped) return;
    ended = true;
    if (on_end) on_end(notice);
  }

  RoundEnd StoreLost(const std::string& why) const {
    RoundEnd notice;
    notice.kind = RoundEndKind::kStoreLost;
    notice.host = self().hostname;
    notice.addr = self().addr;
    notice.node_rank = round.group_rank;
    notice.detail = "the store at " +
                    Endpoint{settings.store_host, settings.store_port}.ToString() + " is gone (" +
                    why + "); the agent hosting it stopped or the network failed";
    return notice;
  }

  // The store answered, but what ended the round is no agent's notice (agents write readable ones
  // and never delete them): a stranger speaking the agents' protocol did it.
  RoundEnd ForeignEnd(const std::string& what) const {
    RoundEnd notice;
    notice.kind = RoundEndKind::kForeignEnd;
    notice.detail = what + " in the round's end key of the store at " +
                    Endpoint{settings.store_host, settings.store_port}.ToString() +
                    ", which is up; without a secret_file any client that reaches the store can "
                    "speak the agents' protocol (see docs/security.md)";
    return notice;
  }

  // The loops run detached: self_ref keeps this state alive until they return, even when the
  // JobChannel is destroyed first (Stop() closes the clients, which ends them).
  asio::awaitable<void> WatchLoop() {
    auto self_ref = shared_from_this();
    try {
      std::vector<std::string> keys{EndKey(settings.run_id, round.round)};
      co_await watch.Wait(keys, kForever);
      // Not a GET: a key deleted after the WAIT fired would make the store close the connection,
      // and the agent would blame the store.
      const auto value = co_await ReadIfPresent(watch, EndKey(settings.run_id, round.round));
      std::string error;
      auto notice = value ? RoundEnd::Decode(*value, &error) : std::nullopt;
      Deliver(notice ? *notice
                     : ForeignEnd(value ? "it holds an unreadable notice (" + error + ")"
                                        : "it deleted the notice"));
    } catch (const std::exception& error) {
      if (!stopped) Deliver(StoreLost(error.what()));
    }
  }

  asio::awaitable<void> HeartbeatLoop() {
    auto self_ref = shared_from_this();
    const auto interval = settings.keep_alive_interval;
    const auto tick = std::max<std::chrono::milliseconds>(interval / 4, kShortestTick);
    const auto limit = interval * std::max(settings.keep_alive_max_attempt, 1);
    std::vector<std::string> keys;
    std::vector<int> ranks;
    for (int rank : HeartbeatPeers(round.group_rank, round.group_world_size())) {
      keys.push_back(rendezvous_keys::Heartbeat(settings.run_id, round.Member(rank).node.node_id));
      ranks.push_back(rank);
    }
    std::vector<Bytes> last(keys.size());
    std::vector<Clock::time_point> changed(keys.size(), Clock::now());
    const std::string mine = rendezvous_keys::Heartbeat(settings.run_id, self().node_id);
    try {
      co_await beat.Add(mine, 1);
      // The rendezvous creates every counter; a peer whose counter never appears is lost too.
      if (!keys.empty() && !co_await beat.Wait(keys, limit)) {
        for (size_t i = 0; i < keys.size(); ++i) {
          std::vector<std::string> one{keys[i]};
          if (co_await beat.Check(one)) continue;
          co_await ReportLost(ranks[i], Clock::now() - changed[i]);
          co_return;
        }
      }
      while (!ended && !stopped) {
        co_await beat.Add(mine, 1);
        std::vector<Bytes> values;
        if (!keys.empty()) values = co_await beat.MultiGet(keys);
        const auto now = Clock::now();
        for (size_t i = 0; i < values.size(); ++i) {
          if (values[i] != last[i]) {
            last[i] = values[i];
            changed[i] = now;
          } else if (judging_peers && now - changed[i] >= limit - tick) {
            // Counters are read once a tick; judging a tick early keeps the report within the
            // limit instead of up to a tick after it.
            co_await ReportLost(ranks[i], now - changed[i]);
            co_return;
          }
        }
        tick_timer.expires_after(tick);
        boost::system::error_code ec;
        co_await tick_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
    } catch (const std::exception& error) {
      if (!stopped) Deliver(StoreLost(error.what()));
    }
  }

  asio::awaitable<void> ReportLost(int rank, Clock::duration silent) {
    const NodeInfo& lost = round.Member(rank).node;
    RoundEnd notice;
    notice.kind = RoundEndKind::kPeerLost;
    notice.host = lost.hostname;
    notice.addr = lost.addr;
    notice.node_rank = rank;
    notice.detail = "no heartbeat for " + FormatSeconds(silent) + " (keep_alive_interval " +
                    FormatSeconds(settings.keep_alive_interval) + " x keep_alive_max_attempt " +
                    std::to_string(settings.keep_alive_max_attempt) + "), noticed by " +
                    self().Label();
    RoundEnd winner = co_await PublishRoundEnd(beat, settings.run_id, round.round, notice);
    co_await ReleaseLiveness(rank);
    Deliver(winner);
  }

  // A peer whose heartbeats lapsed may still hold its connection (a frozen host): its liveness
  // key, which is also its node-rank claim, would then keep a replacement out until it wakes.
  // The key is deleted only while it still names the lost agent; a replacement that claims it
  // within the one round trip between the two steps would lose it, which needs the replacement
  // to start at that very moment.
  asio::awaitable<void> ReleaseLiveness(int rank) {
    const RoundPeer* lost = round.Find(rank);
    if (lost == nullptr || lost->liveness_key.empty()) co_return;
    if (co_await MemberAlive(beat, *lost)) co_await beat.DeleteKey(lost->liveness_key);
  }
};

namespace {

std::unique_ptr<AsyncStoreClient> OwnConnection(const asio::any_io_executor& executor,
                                                const JobChannel::Settings& settings) {
  return std::make_unique<AsyncStoreClient>(
      executor,
      AsyncStoreClient::Options::Agent(settings.read_timeout, settings.secret, settings.trace));
}

}  // namespace

JobChannel::JobChannel(asio::any_io_executor executor, Settings settings, RendezvousResult round,
                       EndHandler on_end) {
  auto own = OwnConnection(executor, settings);
  AsyncStoreClient& connection = *own;
  state_ = std::make_shared<State>(std::move(executor), std::move(settings), std::move(round),
                                   std::move(on_end), std::move(own), connection);
}

JobChannel::JobChannel(asio::any_io_executor executor, Settings settings, RendezvousResult round,
                       EndHandler on_end, AsyncStoreClient& connection)
    : state_(std::make_shared<State>(std::move(executor), std::move(settings), std::move(round),
                                     std::move(on_end), nullptr, connection)) {}

JobChannel::~JobChannel() { Stop(); }

JobChannel::Task<void> JobChannel::Start() {
  auto state = state_;
  const auto deadline = Clock::now() + state->settings.read_timeout;
  const auto& s = state->settings;
  if (state->own) co_await state->own->Connect(s.store_host, s.store_port, deadline);
  if (!state->watch.connected()) {
    throw StoreError("the agent's connection to the store at " +
                     Endpoint{s.store_host, s.store_port}.ToString() + " is closed");
  }
  asio::co_spawn(state->executor, state->WatchLoop(), asio::detached);
  asio::co_spawn(state->executor, state->HeartbeatLoop(), asio::detached);
}

JobChannel::Task<RoundEnd> JobChannel::EndRound(RoundEnd notice) {
  auto state = state_;
  RoundEnd winner =
      co_await PublishRoundEnd(state->control, state->settings.run_id, state->round.round, notice);
  state->Deliver(winner);
  co_return winner;
}

JobChannel::Task<bool> JobChannel::ExitBarrier(std::chrono::milliseconds timeout) {
  auto state = state_;
  // The shape of newest torchrun's exit barrier: an atomic counter, and a flag set by the last
  // arrival that everybody waits for.
  const int64_t arrived = co_await state->control.Add(state->RoundKey("barrier"), 1);
  if (arrived == state->round.group_world_size()) {
    co_await state->control.Set(state->RoundKey("barrier_done"), "");
  }
  std::vector<std::string> keys{state->RoundKey("barrier_done")};
  const bool passed = co_await state->control.Wait(std::move(keys), timeout);
  // Past the barrier every agent may exit, so a silent peer is no longer a lost one.
  if (passed) state->judging_peers = false;
  co_return passed;
}

JobChannel::Task<void> JobChannel::Depart(std::chrono::milliseconds linger) {
  auto state = state_;
  const int others = state->round.group_world_size() - 1;
  if (others <= 0) co_return;
  // The agent hosting the store waits (up to `linger`) for the others to leave, since its exit
  // takes the store away from under them; the last one to leave sets all_left.
  try {
    if (state->settings.hosts_store) {
      std::vector<std::string> keys{state->RoundKey("all_left")};
      co_await state->control.Wait(std::move(keys), linger);
    } else if (co_await state->control.Add(state->RoundKey("left"), 1) == others) {
      co_await state->control.Set(state->RoundKey("all_left"), "");
    }
  } catch (const std::exception&) {
    // Departing is a courtesy to the store's host; the job's result is already known.
  }
}

void JobChannel::Stop() {
  state_->stopped = true;
  state_->tick_timer.cancel();
  state_->watch.Close();
  state_->beat.Close();
  state_->control.Close();
  if (state_->own) state_->own->Close();
}

bool JobChannel::ended() const { return state_->ended; }
const RendezvousResult& JobChannel::round() const { return state_->round; }

}  // namespace cpplaunch
