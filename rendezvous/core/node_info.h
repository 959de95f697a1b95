#pragma once
// What each agent tells the others about itself when it joins a rendezvous round, and the notice
// that ends a round for every agent. Both travel as store values. Pure.

#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// One agent of the job.
struct NodeInfo {
  std::string node_id;   // unique per agent process: "<addr>_<pid>_<random>" (node_id.h)
  std::string addr;      // advertised numeric address (--local-addr or the store route)
  std::string hostname;  // for messages only
  int local_world_size = 0;
  int nnodes_min = 0;  // the --nnodes this agent was started with, for mismatch messages
  int nnodes_max = 0;
  int max_restarts = 0;
  // --worker-store=rank0: the free port this agent's worker rank 0 would host the workers'
  // store on (used when this agent is group rank 0); 0 = the workers use the agent's store.
  // Optional on the wire: agents that predate it send none (0).
  int worker_store_port = 0;
  // "host:port" of this agent's status endpoint (launcher/status/); "" = it serves none.
  // Optional on the wire.
  std::string status;

  // "host-b at 10.0.0.2", for messages.
  std::string Label() const;
  std::string Encode() const;
  // Refuses (nullopt, *error says which field) a record outside record_limits.h: text fields
  // too long, a node_id empty or with a ',', local_world_size outside 1..2^20, nnodes_min
  // outside 1..2^20, nnodes_max below nnodes_min or above 2^20, a negative max_restarts.
  static std::optional<NodeInfo> Decode(std::string_view text, std::string* error);
  friend bool operator==(const NodeInfo&, const NodeInfo&) = default;
};

// --nnodes as torchrun accepts it, for messages: "N" when MIN equals MAX, else "MIN:MAX".
std::string NnodesText(int min_nodes, int max_nodes);

// Why a round ended. The first notice written for a round wins (COMPARE_SET on an absent key),
// so every agent acts on the same one: that is the job's root cause.
enum class RoundEndKind {
  kWorkerFailure,     // a worker exited non-zero or died by a signal
  kAgentStopped,      // an agent received a termination signal or failed internally
  kPeerLost,          // an agent stopped sending heartbeats
  kMembershipChange,  // a host asks to join an elastic job (does not consume a restart)
  kConfigError,       // hosts disagree on the job (--nnodes, duplicate --node-rank, ...)
  kStoreLost,         // local only: this agent lost the store (never written to the store)
  // A member of a complete round died or went silent before its workers started (it never armed
  // the round): the others form the next round without it (does not consume a restart).
  kMemberDropped,
  // Local only: the round's end key holds no notice an agent wrote (unreadable, or deleted
  // after it appeared): a client that is not one of the job's agents ended the round, which
  // needs no secret_file to be set (docs/security.md). The store answers: it is not lost.
  kForeignEnd,
};

struct RoundEnd {
  RoundEndKind kind = RoundEndKind::kWorkerFailure;
  std::string host;  // hostname of the agent that reported (or the lost agent)
  std::string addr;
  int node_rank = -1;  // group rank of that agent, -1 if none
  int rank = -1;       // global rank of the failed worker, -1 if none
  int local_rank = -1;
  std::string detail;  // "exitcode 1", "killed by SIGSEGV", a config message, ...

  bool counts_as_failure() const {
    return kind != RoundEndKind::kMembershipChange && kind != RoundEndKind::kMemberDropped;
  }
  // One line: "worker rank 3 (local rank 1) on host-b (node rank 1, 10.0.0.2): exitcode 1".
  std::string Describe() const;
  // The detail is cut to record_limits::kMaxDetailBytes.
  std::string Encode() const;
  // Refuses text fields longer than record_limits.h allows and ranks below -1 or above the
  // limits.
  static std::optional<RoundEnd> Decode(std::string_view text, std::string* error);
  friend bool operator==(const RoundEnd&, const RoundEnd&) = default;
};

}  // namespace cpplaunch
