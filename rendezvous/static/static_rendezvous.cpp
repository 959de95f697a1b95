#include "rendezvous/static/static_rendezvous.h"

#include <algorithm>

#include "base/text.h"
#include "rendezvous/c10d/store_steps.h"

namespace cpplaunch {
namespace {

using Clock = AsyncStoreClient::Clock;

std::string NodeKey(const std::string& run_id, int64_t round, int node_rank) {
  return rendezvous_keys::Round(run_id, round) + "static/node/" + std::to_string(node_rank);
}

std::string RankList(const std::vector<int>& ranks) {
  std::vector<std::string> texts;
  texts.reserve(ranks.size());
  for (int rank : ranks) texts.push_back(std::to_string(rank));
  return Join(texts, ", ");
}

}  // namespace

StaticRendezvous::StaticRendezvous(const boost::asio::any_io_executor& executor,
                                   RendezvousSettings settings)
    : settings_(std::move(settings)),
      client_(executor, AsyncStoreClient::Options::Agent(settings_.read_timeout, settings_.secret,
                                                         settings_.trace)) {}

std::string StaticRendezvous::ClaimKey(int node_rank) const {
  return rendezvous_keys::Base(settings_.run_id) + "static/claim/" + std::to_string(node_rank);
}

std::string StaticRendezvous::Where() const {
  return "node rank " + std::to_string(settings_.node_rank) + " (" + settings_.self.Label() + ")";
}

Rendezvous::Task<RendezvousResult> StaticRendezvous::Next(std::optional<RoundTransition> previous) {
  const auto deadline = Clock::now() + settings_.timeout;
  // torchrun's static backend takes the MAX of --nnodes as the world size.
  const int nnodes = settings_.max_nodes;
  if (settings_.node_rank < 0) {
    throw RendezvousError("--node-rank=" + std::to_string(settings_.node_rank) +
                          " must not be negative");
  }
  if (!client_.connected()) {
    co_await ConnectWithProgress(client_, settings_.store_host, settings_.store_port, Where(),
                                 deadline, settings_.progress_interval, settings_.progress,
                                 "--rdzv-conf timeout=SECONDS");
    CompleteSelf(client_, &settings_);
  }
  // Once per agent: a replacement agent is a new process with a new id.
  if (!previous) co_await CountNodeId(client_, settings_, Where());
  const int64_t round = previous ? previous->round + 1 : co_await CurrentRound();
  co_await ClaimNodeRank(round, previous.has_value());
  co_await PublishNode(round);
  if (settings_.node_rank >= nnodes) {
    co_await FailConfig(
        round, Where() + " was started with --node-rank=" + std::to_string(settings_.node_rank) +
                   " and --nnodes=" + std::to_string(nnodes) + " (node ranks are 0.." +
                   std::to_string(nnodes - 1) + ")");
  }
  co_await CheckHost(round, deadline);

  std::vector<NodeInfo> nodes;
  // The records are checked before the dead are dropped: a host that found a mismatch published
  // it and exited, and its record still says how it was started.
  do {
    nodes = co_await GatherNodes(round, deadline);
    co_await CheckAgreement(round, nodes, 0);
  } while (!co_await DropDeadNodes(round, nodes));
  RendezvousResult result;
  result.round = round;
  result.restart_count =
      previous ? previous->restart_count + (previous->failure ? 1 : 0) : static_cast<int>(round);
  result.group_rank = settings_.node_rank;
  result.master_addr = settings_.master_addr;
  result.master_port = settings_.master_port;
  std::vector<std::string> liveness_keys;
  liveness_keys.reserve(static_cast<size_t>(nnodes));
  for (int rank = 0; rank < nnodes; ++rank) liveness_keys.push_back(ClaimKey(rank));
  SetEveryMember(&result, std::move(nodes), liveness_keys);
  const std::string round_text = "rendezvous round " + std::to_string(round) + " on " + Where();
  // A member lost while the round arms ends it (kPeerLost): the membership is fixed.
  ArmWatch watch;
  watch.round_text = round_text;
  watch.silent_limit =
      settings_.keep_alive_interval * std::max(settings_.keep_alive_max_attempt, 1);
  watch.beat_interval = std::max<std::chrono::milliseconds>(settings_.keep_alive_interval / 4,
                                                            std::chrono::milliseconds(10));
  watch.progress_interval = settings_.progress_interval;
  watch.progress = settings_.progress;
  co_await ArmRound(client_, settings_.run_id, result, deadline,
                    round_text + ": not every host armed the round within the timeout", watch);
  // Node rank 0 is group rank 0 here: it clears the previous attempt's worker keys, the others
  // wait for its "go".
  co_await ReleaseRound(client_, settings_.run_id, round, result.group_rank, deadline,
                        settings_.progress_interval,
                        round_text + ": node rank 0 did not release the round within the timeout");
  co_return result;
}

// Claim is atomic on the server, so of two live hosts with one --node-rank exactly one holds the
// claim; the node record alone could not tell, since the second SET would overwrite the first.
// The claim is renewed every round: the holder gets its own node id back, and a host whose claim
// was released while it was frozen learns that a replacement took its place.
Rendezvous::Task<void> StaticRendezvous::ClaimNodeRank(int64_t round, bool rejoining) {
  const std::string& self = settings_.self.node_id;
  const Bytes holder = co_await client_.Claim(ClaimKey(settings_.node_rank), self);
  if (holder == self) co_return;
  if (rejoining) {
    throw RendezvousError(Where() + " lost --node-rank=" + std::to_string(settings_.node_rank) +
                          " to the agent " + holder +
                          " (this host was reported lost: frozen or cut off from the store " +
                          "longer than the heartbeats allow)");
  }
  co_await FailConfig(
      round, "two hosts were started with --node-rank=" + std::to_string(settings_.node_rank) +
                 " (one of them is " + Where() + ", the other is the agent " + holder + ")");
}

// Rounds end in order and each ended round has a notice, so the first round without one is the
// job's current round: where a replacement agent (no previous round) belongs.
Rendezvous::Task<int64_t> StaticRendezvous::CurrentRound() {
  int64_t round = 0;
  for (;; ++round) {
    std::vector<std::string> end{EndKey(settings_.run_id, round)};
    if (!co_await client_.Check(end)) break;
  }
  if (round <= settings_.max_restarts) co_return round;
  std::string error;
  auto last = RoundEnd::Decode(co_await client_.Get(EndKey(settings_.run_id, round - 1)), &error);
  throw RendezvousError("job '" + settings_.run_id + "' at the store " + client_.peer() +
                        " has no restarts left for " + Where() + " (--max-restarts=" +
                        std::to_string(settings_.max_restarts) + "); its last round ended: " +
                        (last ? last->Describe() : "unreadable notice: " + error));
}

// Published before any check, so that the other hosts see this host's view of the job (its
// --nnodes) and fail with the same message instead of waiting for their timeout. The heartbeat
// counter is created with it: the job channel waits for every peer's counter.
Rendezvous::Task<void> StaticRendezvous::PublishNode(int64_t round) {
  std::vector<std::string> keys{
      NodeKey(settings_.run_id, round, settings_.node_rank),
      rendezvous_keys::Heartbeat(settings_.run_id, settings_.self.node_id)};
  std::vector<Bytes> values{settings_.self.Encode(), "0"};
  co_await client_.MultiSet(std::move(keys), std::move(values));
}

// The record of a rank whose claim no longer names it belongs to an agent that died while the
// round waited: counting it would start workers that wait for a dead host's workers. The record
// is deleted only while it still is the dead agent's (a replacement may have published its own).
Rendezvous::Task<bool> StaticRendezvous::DropDeadNodes(int64_t round,
                                                       const std::vector<NodeInfo>& nodes) {
  bool all_alive = true;
  for (int rank = 0; rank < static_cast<int>(nodes.size()); ++rank) {
    // Named, not a temporary in the co_await expression: GCC 12 destroys those twice.
    const RoundPeer member{rank, nodes[rank], ClaimKey(rank)};
    if (co_await MemberAlive(client_, member)) continue;
    if (rank == settings_.node_rank) {
      co_await ClaimNodeRank(round, true);  // released while this host was frozen: retake or stop
      continue;
    }
    if (all_alive) co_await ThrowIfEnded(round);
    all_alive = false;
    const std::string key = NodeKey(settings_.run_id, round, rank);
    std::string error;
    auto value = co_await ReadIfPresent(client_, key);
    auto stored = value ? NodeInfo::Decode(*value, &error) : std::nullopt;
    if (stored && stored->node_id == nodes[rank].node_id) co_await client_.DeleteKey(key);
    if (settings_.progress) {
      settings_.progress("node rank " + std::to_string(rank) + " (" + nodes[rank].Label() +
                         ") left before round " + std::to_string(round) +
                         " completed (its connection to the store closed); waiting for a host " +
                         "to take node rank " + std::to_string(rank));
    }
  }
  co_return all_alive;
}

// A host that left the round may have ended it first (a config error it found): then every host
// stops with that message instead of waiting for a replacement.
Rendezvous::Task<void> StaticRendezvous::ThrowIfEnded(int64_t round) {
  auto value = co_await ReadIfPresent(client_, EndKey(settings_.run_id, round));
  if (!value) co_return;
  std::string error;
  auto end = RoundEnd::Decode(*value, &error);
  if (!end) throw RendezvousError("unreadable round-end notice in the store: " + error);
  if (end->kind == RoundEndKind::kConfigError) throw RendezvousError(end->detail);
  throw RendezvousError("rendezvous round " + std::to_string(round) + " on " + Where() +
                        " ended before it completed: " + end->Describe());
}

Rendezvous::Task<std::vector<NodeInfo>> StaticRendezvous::GatherNodes(int64_t round,
                                                                      Clock::time_point deadline) {
  const int nnodes = settings_.max_nodes;
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(nnodes));
  for (int rank = 0; rank < nnodes; ++rank) keys.push_back(NodeKey(settings_.run_id, round, rank));
  const auto started = Clock::now();
  std::vector<int> missing;
  auto tick = [&]() -> boost::asio::awaitable<void> {
    // Another host may have found the job misconfigured (two hosts with one --node-rank): every
    // host stops with its message rather than waiting for hosts that will never come.
    co_await ThrowIfEnded(round);
    std::vector<std::string> mine{keys[settings_.node_rank]};
    if (!co_await client_.Check(mine)) co_await PublishNode(round);
    missing.clear();
    // One CHECK per key: a CHECK of many only says whether all are there, and the progress
    // line names the missing ranks.
    for (int rank = 0; rank < nnodes; ++rank) {
      std::vector<std::string> one{keys[rank]};
      if (!co_await client_.Check(one)) missing.push_back(rank);
    }
    if (settings_.progress) {
      settings_.progress("waiting for hosts at the store " + client_.peer() + ": " +
                         std::to_string(nnodes - static_cast<int>(missing.size())) + "/" +
                         std::to_string(nnodes) + " joined; missing node ranks " +
                         RankList(missing) + "; timeout in " +
                         FormatSeconds(deadline - Clock::now()));
    }
  };
  if (!co_await WaitForKeys(client_, keys, deadline, settings_.progress_interval, tick)) {
    co_await tick();
    throw RendezvousError(
        "rendezvous timed out on " + Where() + " after " + FormatSeconds(Clock::now() - started) +
        ": " + std::to_string(nnodes - static_cast<int>(missing.size())) + " of " +
        std::to_string(nnodes) + " hosts joined the store at " + client_.peer() +
        "; missing node ranks " + RankList(missing) +
        " (were they started, with the same --master-addr/--master-port and --rdzv-id?)");
  }
  // One read per key that tolerates a missing key: another host may drop a dead agent's record
  // between the WAIT and the read (a MULTI_GET naming a missing key would cost the connection).
  std::vector<NodeInfo> nodes;
  for (const std::string& key : keys) {
    auto value = co_await ReadIfPresent(client_, key);
    if (!value) co_return co_await GatherNodes(round, deadline);
    std::string error;
    auto node = NodeInfo::Decode(*value, &error);
    if (!node) throw RendezvousError("unreadable node info in the store: " + error);
    nodes.push_back(std::move(*node));
  }
  co_return nodes;
}

// Every host waits for node rank 0 first: a host started with another --nnodes learns it at
// once, instead of waiting for node ranks that will never come.
Rendezvous::Task<void> StaticRendezvous::CheckHost(int64_t round, Clock::time_point deadline) {
  if (settings_.node_rank == 0) co_return;
  std::vector<std::string> keys{NodeKey(settings_.run_id, round, 0)};
  auto tick = [&]() -> boost::asio::awaitable<void> {
    co_await ThrowIfEnded(round);
    if (settings_.progress) {
      settings_.progress("waiting for node rank 0 at the store " + client_.peer() +
                         "; timeout in " + FormatSeconds(deadline - Clock::now()));
    }
    co_return;
  };
  if (!co_await WaitForKeys(client_, keys, deadline, settings_.progress_interval, tick)) {
    throw RendezvousError("rendezvous timed out on " + Where() + ": node rank 0 never joined " +
                          "the store at " + client_.peer());
  }
  std::string error;
  auto host = NodeInfo::Decode(co_await client_.Get(keys[0]), &error);
  if (!host) throw RendezvousError("unreadable node info in the store: " + error);
  std::vector<NodeInfo> nodes{*host};
  co_await CheckAgreement(round, nodes, 0);
}

Rendezvous::Task<void> StaticRendezvous::CheckAgreement(int64_t round,
                                                        const std::vector<NodeInfo>& nodes,
                                                        int first_rank) {
  const NodeInfo& self = settings_.self;
  const int mine = settings_.node_rank - first_rank;
  if (mine >= 0 && mine < static_cast<int>(nodes.size()) && nodes[mine].node_id != self.node_id) {
    co_await FailConfig(
        round, "two hosts were started with --node-rank=" + std::to_string(settings_.node_rank) +
                   ": " + Where() + " and " + nodes[mine].Label());
  }
  for (size_t rank = 0; rank < nodes.size(); ++rank) {
    const NodeInfo& other = nodes[rank];
    if (other.nnodes_min != self.nnodes_min || other.nnodes_max != self.nnodes_max) {
      co_await FailConfig(
          round,
          "node rank " + std::to_string(rank + first_rank) + " (" + other.Label() +
              ") was started with --nnodes=" + NnodesText(other.nnodes_min, other.nnodes_max) +
              " but " + Where() + " with --nnodes=" + NnodesText(self.nnodes_min, self.nnodes_max));
    }
    if (other.max_restarts != self.max_restarts) {
      co_await FailConfig(round, "node rank " + std::to_string(rank + first_rank) + " (" +
                                     other.Label() + ") was started with --max-restarts=" +
                                     std::to_string(other.max_restarts) + " but " + Where() +
                                     " with --max-restarts=" + std::to_string(self.max_restarts));
    }
  }
}

Rendezvous::Task<void> StaticRendezvous::FailConfig(int64_t round, std::string message) {
  RoundEnd notice;
  notice.kind = RoundEndKind::kConfigError;
  notice.host = settings_.self.hostname;
  notice.addr = settings_.self.addr;
  notice.node_rank = settings_.node_rank;
  notice.detail = message;
  try {
    co_await PublishRoundEnd(client_, settings_.run_id, round, notice);
  } catch (const StoreError&) {
    // The local message below is what matters; the others time out if they cannot be told.
  }
  throw RendezvousError(message);
}

Rendezvous::Task<void> StaticRendezvous::Close(std::string) { co_return; }

Rendezvous::Task<void> StaticRendezvous::Disarm() {
  try {
    if (client_.connected()) co_await client_.CancelWills();
  } catch (const std::exception&) {
    // The store is gone: so is the will.
  }
}

}  // namespace cpplaunch
