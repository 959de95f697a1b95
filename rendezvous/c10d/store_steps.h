#pragma once
// Store steps shared by the static and dynamic rendezvous and the job channel: connecting with
// progress lines, waiting for keys with progress lines, publishing the notice that ends a round,
// arming a round (every member's death ends it from then on), and releasing a new round once the
// previous round's worker keys are cleared. Coroutines on the caller's loop thread; each uses the
// client it is given (one operation at a time on it). Every client is an agent connection
// (AsyncStoreClient::Options::Agent): the keys below live in the agents' namespace of the store,
// out of reach of PyTorch clients.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/asio_coroutine.h"
#include "base/text.h"
#include "rendezvous/core/node_info.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/store/client/async_store_client.h"

namespace cpplaunch {

using ProgressSink = std::function<void(const std::string&)>;

// Connects `client` to host:port, retrying until `deadline`, calling `progress` every
// `interval` with the last reason and the time left; the first of those lines also names
// `deadline_setting` (e.g. "--rdzv-conf timeout=SECONDS"), the setting that shortens the wait.
// Throws RendezvousError naming the address, this host (`from`) and the reason.
boost::asio::awaitable<void> ConnectWithProgress(AsyncStoreClient& client, std::string host,
                                                 int port, std::string from,
                                                 AsyncStoreClient::Clock::time_point deadline,
                                                 std::chrono::milliseconds interval,
                                                 ProgressSink progress,
                                                 std::string deadline_setting = "");

// Counts this agent's node id in the store (one ADD on "cpplaunch/<run_id>/ids/<node id>"), once
// per agent, after its first connect: a count above 1 means another agent of the job already
// joined with this id (node_id.h), and this one throws RendezvousError(NodeIdClashMessage)
// instead of sharing the other's records, heartbeats and place.
boost::asio::awaitable<void> CountNodeId(AsyncStoreClient& client,
                                         const RendezvousSettings& settings,
                                         const std::string& where);

// Waits until every key exists (true) or `deadline` (false). Every `interval` without success
// calls on_tick(), which may report progress; it is a coroutine so it can query the store.
boost::asio::awaitable<bool> WaitForKeys(AsyncStoreClient& client, std::vector<std::string> keys,
                                         AsyncStoreClient::Clock::time_point deadline,
                                         std::chrono::milliseconds interval,
                                         std::function<boost::asio::awaitable<void>()> on_tick);

// Writes `notice` as the end of `round` unless a notice is already there; returns the notice
// that is stored now (ours, or the earlier one: the root cause).
boost::asio::awaitable<RoundEnd> PublishRoundEnd(AsyncStoreClient& client,
                                                 const std::string& run_id, int64_t round,
                                                 RoundEnd notice);

// Deletes every key of the workers' namespace (the workers' keys of earlier rounds, and whatever
// strangers added) in one store command, however many there are, then sets the round's "go"
// key. Called by group rank 0 of a round > 0 (through ReleaseRound).
boost::asio::awaitable<void> ClearWorkerKeys(AsyncStoreClient& client, const std::string& run_id,
                                             int64_t round);

// The value of `key`, or nullopt when it is missing, in one round trip that cannot fail on a
// missing key (a GET of a missing key makes the store close the connection, and with it this
// agent's claims and will).
boost::asio::awaitable<std::optional<Bytes>> ReadIfPresent(AsyncStoreClient& client,
                                                           std::string key);

// True when `member`'s liveness key (a key owned by its rendezvous connection through Claim) still
// holds its node id: its agent's connection is open and nobody released the key after its
// heartbeats lapsed.
boost::asio::awaitable<bool> MemberAlive(AsyncStoreClient& client, const RoundPeer& member);

// How ArmRound watches the members that have not armed yet, and what it says while it waits.
struct ArmWatch {
  // "round 0 of job 'x'": names the round in progress lines.
  std::string round_text;
  // A member that has not armed and whose heartbeat counter stood still this long (keep-alive
  // interval x max attempts) is lost, like one whose connection closed. Zero: only closed ones.
  std::chrono::milliseconds silent_limit{0};
  // How often this member bumps its own heartbeat counter while it waits (keep-alive / 4).
  std::chrono::milliseconds beat_interval{std::chrono::seconds(1)};
  // What a lost member's notice says: kPeerLost ends the round (static: fixed membership);
  // kMemberDropped asks the others to form the next round without it (c10d: ReformedWithout).
  RoundEndKind lost_kind = RoundEndKind::kPeerLost;
  std::chrono::milliseconds progress_interval{std::chrono::seconds(5)};
  ProgressSink progress;  // a line every progress_interval while not every member armed
};

// How arming ended: every member armed (the round runs), or the round's end notice came first
// (read it: a lost member's, or any other).
enum class ArmOutcome { kAllArmed, kEnded };

// Makes this agent's death end `round` for everybody, then waits until every member did so.
// Registers a will on the round's end key (a kPeerLost notice naming this agent: its connection to
// the store closed; earlier wills of this connection are cancelled first) and marks itself armed
// in one request (AsyncStoreClient::Arm), then waits until every member did (one counter and one
// "all armed" key, so that a round of N members costs O(N) store work, not N^2). While it waits it
// bumps its own heartbeat counter (rendezvous_keys::Heartbeat) every watch.beat_interval, as the
// job channel does while the job runs. A member that is not armed and whose liveness key is gone
// died in between; one whose heartbeat counter stood still for watch.silent_limit is frozen or cut
// off (its connection may stay open for a long time). While arming makes no progress, each member
// checks the next member on the ring of group ranks, and publishes a watch.lost_kind notice naming
// a lost one, since its will may never come. Returns kEnded when the round ended (a lost member's
// notice or any other; the job channel delivers it at once). Throws
// RendezvousError(`timeout_message`) at `deadline`.
//
// Why arm at all: a member's death must end the round from the moment the others may count it,
// and a will registered by each agent only after it saw the round complete would leave a gap in
// which a dead member is counted and only heartbeats (15 s) find it.
// `result` must list this agent and its ring neighbour (group rank + 1).
// `watch` is read while the coroutine runs: the caller keeps it (a named object: GCC 12 destroys a
// coroutine's by-value class parameters made from temporaries twice).
boost::asio::awaitable<ArmOutcome> ArmRound(AsyncStoreClient& client, const std::string& run_id,
                                            const RendezvousResult& result,
                                            AsyncStoreClient::Clock::time_point deadline,
                                            std::string timeout_message, const ArmWatch& watch);
// The same with ArmWatch's defaults: only a member whose connection closed is lost.
boost::asio::awaitable<ArmOutcome> ArmRound(AsyncStoreClient& client, const std::string& run_id,
                                            const RendezvousResult& result,
                                            AsyncStoreClient::Clock::time_point deadline,
                                            std::string timeout_message);

// The notice this agent's will writes when its connection closes without a clean departure.
RoundEnd ConnectionClosedNotice(const NodeInfo& self, int group_rank);

// The last step of a round before workers start. Round 0 has nothing to clean: returns at once.
// In a later round, group rank 0 runs ClearWorkerKeys and every other rank waits for the round's
// "go" key, so no host starts workers while the previous attempt's worker keys remain. Throws
// RendezvousError(`timeout_message`) when the go key is not there by `deadline`.
boost::asio::awaitable<void> ReleaseRound(AsyncStoreClient& client, const std::string& run_id,
                                          int64_t round, int group_rank,
                                          AsyncStoreClient::Clock::time_point deadline,
                                          std::chrono::milliseconds interval,
                                          std::string timeout_message);

std::string GoKey(const std::string& run_id, int64_t round);
std::string EndKey(const std::string& run_id, int64_t round);
std::string ArmedKey(const std::string& run_id, int64_t round, int group_rank);

}  // namespace cpplaunch
