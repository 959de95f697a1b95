#pragma once
// What the agent's status endpoint knows about the job (docs/status.md): the facts fixed at
// start, what the agent's events changed since, and what is sampled from /proc when somebody
// asks. Kept by StatusListener (status_listener.h); rendered by StatusJson (GET /status) and
// MetricsText (metrics_text.h, GET /metrics). Pure: every time is given by the caller.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cpplaunch {

// Where the agent is in its story (agent_events.h).
enum class AgentPhase { kRendezvous, kRunning, kConcluding, kDone };
const char* PhaseName(AgentPhase phase);  // "rendezvous", "running", ...

enum class RankState { kRunning, kSucceeded, kFailed, kStopped };
const char* RankStateName(RankState state);

// One local worker of the current (or last) attempt.
struct RankStatus {
  int local_rank = 0;
  int rank = 0;  // global
  int pid = 0;
  RankState state = RankState::kRunning;
  double started_at = 0;                 // Unix seconds
  std::optional<double> last_output_at;  // Unix seconds of its last output; none yet
  std::uint64_t output_lines = 0;        // newlines written so far (stdout and stderr)
  std::optional<int> exit_code;
  std::string signal;  // "SIGKILL" when a signal ended it
  std::string reason;  // why it ended, in plain words ("" = nothing to add)
  // Sampled from /proc when asked (none: the process is gone or was never read).
  std::optional<std::uint64_t> rss_bytes;  // the worker process's resident memory
  std::optional<double> cpu_share;         // its process tree's CPU, in CPUs, since the last look
  std::optional<double> cpu_seconds;       // its process tree's CPU time so far
};

// The last failure this agent heard of: a local rank's, or another host's (rank -1 when the
// notice named no rank).
struct FailureStatus {
  int rank = -1;
  int local_rank = -1;
  int group_rank = -1;
  std::string host;
  std::string reason;
  double at = 0;  // Unix seconds
};

// A host of the round as this agent knows it.
struct HostStatus {
  int group_rank = 0;
  std::string hostname;
  std::string address;
  std::string status_address;  // "" = it serves no status endpoint
  bool self = false;
};

// What the store this agent serves holds (none when another host serves the job's store).
struct StoreFigures {
  std::uint64_t requests = 0;
  std::uint64_t refused = 0;  // requests and connections refused (budget, protocol, peers)
  std::uint64_t connections = 0;
  std::uint64_t keys = 0;
  std::uint64_t budget_used_bytes = 0;
  std::uint64_t budget_total_bytes = 0;
};

struct JobStatus {
  // Fixed at start.
  std::string hostname;
  int pid = 0;
  std::string status_address;  // where this endpoint listens, "host:port"
  std::string run_id;
  std::string backend;  // "none" (single host), "static", "c10d", "etcd-v3"
  std::string nnodes;   // "2", "1:4"
  int max_restarts = 0;
  double agent_started_at = 0;  // Unix seconds

  // From the agent's events.
  AgentPhase phase = AgentPhase::kRendezvous;
  int restarts_used = 0;  // TORCHELASTIC_RESTART_COUNT of the current (or last) attempt
  std::int64_t round = 0;
  bool placed = false;  // a round completed: the fields below mean something
  int group_rank = 0;
  int group_world_size = 0;
  int world_size = 0;
  int base_rank = 0;
  int local_world_size = 0;
  std::vector<RankStatus> ranks;
  std::optional<FailureStatus> last_failure;
  std::vector<HostStatus> hosts;
  // Each rendezvous' duration in seconds (from the agent's start or the last attempt's end to
  // the round's completion), for the histogram.
  std::vector<double> rendezvous_seconds;
  std::optional<StoreFigures> store;
};

// The JSON answer of GET /status (schema 1, docs/status.md) at Unix time `now`. Without
// `show_peer_addresses` (a secret is set and the request did not prove it), other hosts'
// addresses are null and "hosts_hidden" says why.
std::string StatusJson(const JobStatus& status, double now, bool show_peer_addresses);

}  // namespace cpplaunch
