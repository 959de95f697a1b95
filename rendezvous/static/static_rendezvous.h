#pragma once
// torchrun's static rendezvous (--nnodes=N --node-rank=R --master-addr=A --master-port=P): the
// agent of node rank 0 hosts the store on A:P (the launcher starts the server); every agent,
// node 0 included, connects, publishes its NodeInfo under its node rank, and waits until all N
// node ranks are there. Group rank = node rank; RANK offsets follow from the local world sizes.
// Hosts that disagree (--nnodes, --max-restarts, the same --node-rank twice) end the round with
// a config-error notice, so every host stops with the same message.
//
// Node-rank claims and replacements. A node rank is claimed once per job, not per round: the
// key cpplaunch/<run_id>/static/claim/<rank> holds the claimant's node id and is owned by its
// rendezvous connection (Claim), which lives as long as the agent. It is its liveness key too. So
//   - a second live host with the same --node-rank finds the claim taken: config error, as before;
//   - the claim of an agent that dies (SIGKILL, OOM, crash) vanishes with its connection, and the
//     claim of one whose heartbeats lapse (a frozen host) is deleted by the peer reporting it
//     lost; a replacement started with the same --node-rank can then take the rank;
//   - a replacement (no previous round) must find the job's current round, not round 0: rounds
//     end in order and every ended round has an end notice, so the current round is the first
//     one without a notice. When that round is past --max-restarts the job has no restarts left
//     and the replacement says so (naming how the last round ended) instead of waiting. In a
//     static job every round after the first is a failure restart, so its restart count is the
//     round number;
//   - a frozen agent that wakes after a replacement took its rank finds the claim taken by
//     another node id at its next round and stops with that message, without ending the round.
// Dead members. The round is complete when all N node records are there and each rank's claim
// still names that record's node: the record of an agent that died while the round waited for
// others is dropped (deleted), so the round waits for its replacement instead of counting a dead
// agent. Then the members arm the round (ArmRound): from there on a death ends it at once.

#include <boost/asio/any_io_executor.hpp>

#include "rendezvous/core/rendezvous.h"
#include "rendezvous/store/client/async_store_client.h"

namespace cpplaunch {

class StaticRendezvous : public Rendezvous {
 public:
  StaticRendezvous(const boost::asio::any_io_executor& executor, RendezvousSettings settings);

  // Round numbers count up from 0; every new round is a failure restart (restart count + 1).
  // Waits at most settings.timeout (connecting included).
  Task<RendezvousResult> Next(std::optional<RoundTransition> previous) override;
  // Nothing to close for a static job (as torchrun).
  Task<void> Close(std::string reason) override;
  Task<void> Disarm() override;
  void Cancel() override { client_.Close(); }
  AsyncStoreClient* connection() override { return &client_; }

 private:
  // Throws (a config error on a first join, a lost rank on a later one) when another agent
  // holds this node rank.
  Task<void> ClaimNodeRank(int64_t round, bool rejoining);
  Task<int64_t> CurrentRound();
  Task<void> PublishNode(int64_t round);
  Task<std::vector<NodeInfo>> GatherNodes(int64_t round,
                                          AsyncStoreClient::Clock::time_point deadline);
  // Drops the records of ranks whose claim no longer names them; true when all were alive.
  Task<bool> DropDeadNodes(int64_t round, const std::vector<NodeInfo>& nodes);
  Task<void> ThrowIfEnded(int64_t round);  // throws RendezvousError when the round has an end
  Task<void> CheckHost(int64_t round, AsyncStoreClient::Clock::time_point deadline);
  // nodes[i] is node rank first_rank + i.
  Task<void> CheckAgreement(int64_t round, const std::vector<NodeInfo>& nodes, int first_rank);
  // Publishes a config-error end of `round` and throws RendezvousError(message).
  Task<void> FailConfig(int64_t round, std::string message);
  std::string Where() const;  // "host-b (10.0.0.2)"
  std::string ClaimKey(int node_rank) const;

  RendezvousSettings settings_;
  AsyncStoreClient client_;
};

}  // namespace cpplaunch
