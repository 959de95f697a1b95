#include "rendezvous/c10d/store_steps.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>

#include "rendezvous/c10d/connect_pacing.h"
#include "rendezvous/core/node_id.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace asio = boost::asio;
using Clock = AsyncStoreClient::Clock;

namespace rendezvous_keys {
std::string Base(const std::string& run_id) { return "cpplaunch/" + run_id + "/"; }
std::string Round(const std::string& run_id, int64_t round) {
  return Base(run_id) + "r" + std::to_string(round) + "/";
}
std::string Heartbeat(const std::string& run_id, const std::string& node_id) {
  return Base(run_id) + "hb/" + node_id;
}
}  // namespace rendezvous_keys

void CompleteSelf(const AsyncStoreClient& client, RendezvousSettings* settings) {
  // The plan leaves addr empty without --local-addr and node_id as "_<pid>_<random>": the
  // address is the route to the store, known only once connected. "<addr>_<pid>_<random>" then
  // plays the part of torchrun's "<fqdn>_<pid>_<counter>" node id.
  NodeInfo& self = settings->self;
  if (self.addr.empty()) self.addr = client.local_address();
  self.node_id = WithAddress(self.node_id, self.addr);
  if (settings->status_address) self.status = settings->status_address(self.addr);
}

asio::awaitable<void> CountNodeId(AsyncStoreClient& client, const RendezvousSettings& settings,
                                  const std::string& where) {
  // ADD, not CLAIM: a claim answers with the value stored, which is this agent's own id when
  // the other agent holds it, so it cannot tell the two apart; a count can.
  const int64_t count = co_await client.Add(
      rendezvous_keys::Base(settings.run_id) + "ids/" + settings.self.node_id, 1);
  if (count != 1) {
    throw RendezvousError(NodeIdClashMessage(settings.run_id, settings.self.node_id, where));
  }
}

std::string GoKey(const std::string& run_id, int64_t round) {
  return rendezvous_keys::Round(run_id, round) + "go";
}
std::string EndKey(const std::string& run_id, int64_t round) {
  return rendezvous_keys::Round(run_id, round) + "end";
}

std::string ArmedKey(const std::string& run_id, int64_t round, int group_rank) {
  return rendezvous_keys::Round(run_id, round) + "armed/" + std::to_string(group_rank);
}

// The one line a connect ends with when the port is not (or no longer) a store's.
RendezvousError NotAStore(const std::string& from, const std::string& peer,
                          const StoreHandshakeFailed& error, int silent_closes) {
  if (!error.answer().empty() && error.answer().front() == '"') {
    return RendezvousError("rendezvous failed on " + from + ": the service at " + peer +
                           " is not a store: it answered " + error.answer() +
                           " (is that port another service's? check --master-port or the "
                           "--rdzv-endpoint port)");
  }
  // Bytes that are not text may come from a store of another version: the client's own reason
  // says more than "not a store".
  if (!error.answer().empty()) {
    return RendezvousError("rendezvous failed on " + from + ": " + error.what() + " (it answered " +
                           error.answer() + ")");
  }
  return RendezvousError("rendezvous failed on " + from + ": the service at " + peer +
                         " accepted the connection and closed it without answering the store "
                         "handshake, " +
                         std::to_string(silent_closes) +
                         " times in a row: it is not a store, or a store that refuses this host "
                         "(see allowed peers in docs/security.md)");
}

// What a connect that keeps failing says: a progress line while it retries, and the error when
// it gives up. `unresolved` is the resolver's error while the store's name does not resolve.
struct ConnectFailure {
  const std::string& from;
  const std::string& host;
  const std::string& reason;
  const std::string& unresolved;

  std::string GiveUp(Clock::duration waited) const {
    if (!unresolved.empty()) {
      return "rendezvous failed on " + from + ": the store's host name '" + host +
             "' did not resolve within " + FormatSeconds(waited) + " (" + unresolved +
             "); check the name, or give a numeric address";
    }
    return "rendezvous failed on " + from + ": " + reason + "; gave up after " +
           FormatSeconds(waited) +
           " (check the address and port, that the host running the store is up, and that no "
           "firewall blocks the port)";
  }

  std::string StillTrying(Clock::duration left) const {
    if (!unresolved.empty()) {
      return "waiting for the name " + host + " to resolve (from " + from + "): " + unresolved +
             "; giving up in " + FormatSeconds(left);
    }
    return "still trying to reach the rendezvous store from " + from + ": " + reason +
           "; giving up in " + FormatSeconds(left);
  }
};

asio::awaitable<void> ConnectWithProgress(AsyncStoreClient& client, std::string host, int port,
                                          std::string from, Clock::time_point deadline,
                                          std::chrono::milliseconds interval, ProgressSink progress,
                                          std::string deadline_setting) {
  const auto started = Clock::now();
  ConnectPacing pacing(started, interval);
  asio::steady_timer pause_timer(co_await asio::this_coro::executor);
  // `client` belongs to the caller's object (a rendezvous), which may be destroyed while this
  // waits: after a failed attempt or a pause it is only touched once the probe said it lives.
  const auto closed = client.ClosedProbe();
  for (;;) {
    const auto began = Clock::now();
    auto slice_end = std::min(deadline, began + interval);
    std::string reason;
    std::string unresolved;  // the resolver's error while the name does not resolve
    try {
      co_await client.Connect(host, port, slice_end);
      co_return;
    } catch (const StoreNameUnresolved& error) {
      reason = error.what();
      unresolved = error.resolver_error();
      pacing.OtherFailure();
    } catch (const StoreHandshakeFailed& error) {
      if (error.refused())
        throw RendezvousError("rendezvous failed on " + from + ": " + error.what());
      reason = error.what();
      const bool answered = !error.answer().empty();
      if (answered || pacing.SilentClose()) {
        throw NotAStore(from, Endpoint{host, port}.ToString(), error, pacing.silent_closes());
      }
    } catch (const StoreError& error) {
      reason = error.what();
      pacing.OtherFailure();
    }
    if (closed()) throw RendezvousError("rendezvous cancelled on " + from);
    // Names of nodes and services may appear late (Kubernetes headless services): wait for the
    // name until the deadline, saying that it is the name that is awaited.
    const ConnectFailure failure{from, host, reason, unresolved};
    if (Clock::now() >= deadline) throw RendezvousError(failure.GiveUp(Clock::now() - started));
    if (progress && pacing.ShouldReport(Clock::now())) {
      // A wrong address waits the whole timeout (900 s by default): the first line says how
      // to wait less, once.
      std::string line = failure.StillTrying(deadline - Clock::now());
      if (!deadline_setting.empty()) line += " (" + deadline_setting + " waits less)";
      deadline_setting.clear();
      progress(line);
    }
    // A failure that came fast (the peer answered and hung up) is not retried at once.
    const auto pause = std::min<Clock::duration>(pacing.PauseAfterFailure(began, Clock::now()),
                                                 deadline - Clock::now());
    if (pause > Clock::duration::zero()) {
      pause_timer.expires_after(pause);
      boost::system::error_code ignored;
      co_await pause_timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      if (closed()) throw RendezvousError("rendezvous cancelled on " + from);
    }
  }
}

asio::awaitable<bool> WaitForKeys(AsyncStoreClient& client, std::vector<std::string> keys,
                                  Clock::time_point deadline, std::chrono::milliseconds interval,
                                  std::function<asio::awaitable<void>()> on_tick) {
  // WAIT in slices of `interval` so that on_tick can report (and look at the store) between
  // them. Once the deadline has passed, one CHECK decides, so keys that arrived just as the last
  // slice ended still count.
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) co_return co_await client.Check(keys);
    if (co_await client.Wait(keys, std::min(left, interval))) co_return true;
    if (Clock::now() < deadline && on_tick) co_await on_tick();
  }
}

asio::awaitable<RoundEnd> PublishRoundEnd(AsyncStoreClient& client, const std::string& run_id,
                                          int64_t round, RoundEnd notice) {
  // COMPARE_SET against "" writes only where no notice exists yet, in one step: when several
  // agents fail at once exactly one notice wins, and every agent reports that same (first) cause.
  std::string mine = notice.Encode();
  Bytes stored = co_await client.CompareSet(EndKey(run_id, round), "", mine);
  if (stored == mine) co_return notice;
  std::string error;
  auto earlier = RoundEnd::Decode(stored, &error);
  if (!earlier) throw StoreError("round-end notice in the store is unreadable: " + error);
  co_return *earlier;
}

asio::awaitable<void> ClearWorkerKeys(AsyncStoreClient& client, const std::string& run_id,
                                      int64_t round) {
  // The previous round's worker keys (their own store barriers and counters) would mislead the
  // new round's workers; the agents' keys live in their own namespace and stay. One request
  // however many worker keys exist (issue 15). The go key is written last, so no agent starts
  // workers before the store is clean.
  co_await client.ClearWorkerKeys();
  co_await client.Set(GoKey(run_id, round), "");
}

RoundEnd ConnectionClosedNotice(const NodeInfo& self, int group_rank) {
  RoundEnd notice;
  notice.kind = RoundEndKind::kPeerLost;
  notice.host = self.hostname;
  notice.addr = self.addr;
  notice.node_rank = group_rank;
  notice.detail =
      "its connection to the store closed (the agent exited, was killed, or its host failed)";
  return notice;
}

asio::awaitable<std::optional<Bytes>> ReadIfPresent(AsyncStoreClient& client, std::string key) {
  // COMPARE_SET with an `expected` no stored value can equal never stores anything; its reply is
  // the current value, or `expected` itself when the key is missing (TCPStore semantics).
  static const Bytes kAbsent = std::string(
      "\x01"
      "absent");
  Bytes stored = co_await client.CompareSet(std::move(key), kAbsent, kAbsent + "!");
  if (stored == kAbsent) co_return std::nullopt;
  co_return stored;
}

asio::awaitable<bool> MemberAlive(AsyncStoreClient& client, const RoundPeer& member) {
  std::optional<Bytes> holder = co_await ReadIfPresent(client, member.liveness_key);
  co_return holder == member.node.node_id;
}

namespace {

// What the member before `next` on the ring has seen of next's heartbeat counter while the round
// arms: a counter that stands still from the start of arming counts from there.
struct RingWatch {
  std::optional<Bytes> last;
  bool seen = false;
  Clock::time_point changed_at = Clock::now();
};

// The notice naming `next` when it is lost (it has not armed, and its connection closed or its
// heartbeat counter stood still for watch.silent_limit); nullopt while it may still arm.
asio::awaitable<std::optional<RoundEnd>> LostMember(AsyncStoreClient& client,
                                                    const std::string& run_id, int64_t round,
                                                    const RoundPeer& next, const ArmWatch& watch,
                                                    RingWatch* ring) {
  std::vector<std::string> one{ArmedKey(run_id, round, next.group_rank)};
  if (co_await client.Check(one)) co_return std::nullopt;
  RoundEnd notice = ConnectionClosedNotice(next.node, next.group_rank);
  notice.kind = watch.lost_kind;
  if (!co_await MemberAlive(client, next)) {
    notice.detail = "its connection to the store closed during the rendezvous of round " +
                    std::to_string(round);
    co_return notice;
  }
  if (watch.silent_limit <= std::chrono::milliseconds::zero()) co_return std::nullopt;
  std::string beat_key = rendezvous_keys::Heartbeat(run_id, next.node.node_id);
  std::optional<Bytes> beat = co_await ReadIfPresent(client, std::move(beat_key));
  const auto now = Clock::now();
  if (!ring->seen || beat != ring->last) {
    if (ring->seen) ring->changed_at = now;
    ring->seen = true;
    ring->last = std::move(beat);
    co_return std::nullopt;
  }
  if (now - ring->changed_at < watch.silent_limit) co_return std::nullopt;
  notice.detail = "its agent " + next.node.node_id + " sent no heartbeat for " +
                  FormatSeconds(now - ring->changed_at) + " while round " + std::to_string(round) +
                  " armed (keep_alive_interval x keep_alive_max_attempt), and it never armed it";
  co_return notice;
}

std::string ArmingLine(const ArmWatch& watch, int64_t armed, int64_t size) {
  std::string line = watch.round_text + ": " + std::to_string(armed) + " of " +
                     std::to_string(size) + " hosts armed the round; waiting for the others";
  if (watch.silent_limit > std::chrono::milliseconds::zero()) {
    line += " (a host silent for " + FormatSeconds(watch.silent_limit) + " is dropped)";
  }
  return line;
}

}  // namespace

// The armed marks are counted (one ADD each) and the member that completes the count sets one
// "all armed" key, which every member waits for: a member's wait costs one watch and one wake-up
// whatever the size of the round. (Waiting for every member's mark instead costs each member N
// watches, and its scan after a tick N round trips: N^2 for the round.) The per-rank marks stay
// for the check of the next member, which runs only while arming makes no progress: then someone
// may have died or gone silent.
asio::awaitable<ArmOutcome> ArmRound(AsyncStoreClient& client, const std::string& run_id,
                                     const RendezvousResult& result, Clock::time_point deadline,
                                     std::string timeout_message, const ArmWatch& watch) {
  const int64_t round = result.round;
  const int group_rank = result.group_rank;
  // Arming normally takes a few round trips; the tick only bounds how long the round's end, or a
  // member that died before arming, goes unnoticed. Each tick costs every waiting member three
  // requests, and in a round of thousands arming spans a second or more (a fixed 50 ms tick was a
  // third of an agent's requests at 4,000 agents), so the tick starts at 0.1 ms per member
  // (50 ms at least) and doubles while the wait goes on, up to kLongestTick.
  constexpr auto kShortestTick = std::chrono::milliseconds(50);
  constexpr auto kLongestTick = std::chrono::milliseconds(400);
  const auto size = static_cast<int64_t>(result.group_world_size());
  auto tick = std::clamp(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::microseconds(100) * size),
      kShortestTick, kLongestTick);
  const std::string end = EndKey(run_id, round);
  const std::string count_key = rendezvous_keys::Round(run_id, round) + "armed_count";
  const std::string all_armed = rendezvous_keys::Round(run_id, round) + "all_armed";
  const std::string beat_key = rendezvous_keys::Heartbeat(run_id, result.self().node_id);
  const AsyncStoreClient::Arming arming{
      end,       ConnectionClosedNotice(result.self(), group_rank).Encode(),
      beat_key,  ArmedKey(run_id, round, group_rank),
      count_key, size,
      all_armed};
  int64_t armed_count = co_await client.Arm(arming);
  auto next_beat = Clock::now() + watch.beat_interval;
  auto next_progress = Clock::now() + watch.progress_interval;
  RingWatch ring;
  for (;;) {
    std::vector<std::string> done{all_armed};
    if (co_await client.Wait(done, tick)) co_return ArmOutcome::kAllArmed;
    tick = std::min(tick * 2, kLongestTick);
    std::vector<std::string> ended{end};
    if (co_await client.Check(ended)) co_return ArmOutcome::kEnded;
    if (Clock::now() >= next_beat) {
      co_await client.Add(beat_key, 1);
      next_beat = Clock::now() + watch.beat_interval;
    }
    const int64_t now_armed = co_await client.Add(count_key, 0);
    if (now_armed == armed_count && size > 1) {
      // No progress for a tick: a member may have died or gone silent before arming. Each member
      // looks at the next one on the ring only (a few round trips, not 2N each: under load, a
      // busy store stalls arming for a tick, and N members scanning N members would bury it).
      // Any lost member is still found: the live member before the first lost one of a run looks
      // at it, and a dead member that had armed ends the round through its will.
      const RoundPeer& next = result.Member(static_cast<int>((group_rank + 1) % size));
      if (auto lost = co_await LostMember(client, run_id, round, next, watch, &ring)) {
        co_await PublishRoundEnd(client, run_id, round, std::move(*lost));
        co_return ArmOutcome::kEnded;
      }
    }
    armed_count = now_armed;
    if (watch.progress && Clock::now() >= next_progress) {
      watch.progress(ArmingLine(watch, now_armed, size));
      next_progress = Clock::now() + watch.progress_interval;
    }
    if (Clock::now() >= deadline) throw RendezvousError(timeout_message);
  }
}

asio::awaitable<ArmOutcome> ArmRound(AsyncStoreClient& client, const std::string& run_id,
                                     const RendezvousResult& result, Clock::time_point deadline,
                                     std::string timeout_message) {
  const ArmWatch watch;
  co_return co_await ArmRound(client, run_id, result, deadline, std::move(timeout_message), watch);
}

asio::awaitable<void> ReleaseRound(AsyncStoreClient& client, const std::string& run_id,
                                   int64_t round, int group_rank, Clock::time_point deadline,
                                   std::chrono::milliseconds interval,
                                   std::string timeout_message) {
  if (round == 0) co_return;
  if (group_rank == 0) {
    co_await ClearWorkerKeys(client, run_id, round);
    co_return;
  }
  std::vector<std::string> go{GoKey(run_id, round)};
  if (!co_await WaitForKeys(client, std::move(go), deadline, interval, {})) {
    throw RendezvousError(timeout_message);
  }
}

}  // namespace cpplaunch
