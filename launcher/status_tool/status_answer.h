#pragma once
// One agent's /status answer (schema 1 of the agent's status endpoint), read into the fields
// cpplaunch-status shows, with the document itself kept for --json. Every field the agent may
// leave null is optional here; a field of the wrong type counts as null, so an agent a version
// ahead still shows what this tool understands. Pure; nothing here throws.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch::status {

// The schema this tool reads; an answer with another is refused, not guessed at.
inline constexpr int kStatusSchema = 1;

struct RankStatus {
  std::optional<int> local_rank;
  std::optional<int> rank;
  std::optional<int64_t> pid;
  std::string state;                 // "running", "succeeded", "failed", "stopped"; "" when null
  std::optional<double> started_at;  // Unix seconds
  std::optional<double> last_output_at;           // Unix seconds
  std::optional<double> last_output_age_seconds;  // null: nothing written yet
  std::optional<uint64_t> rss_bytes;
  std::optional<double> cpu_share;  // of one CPU: 0.97 is 97 %
};

// A member of the round as the answering agent knows it.
struct KnownHost {
  std::optional<int> group_rank;
  std::string hostname;
  std::string status_address;  // "" when null: no endpoint, or hidden by the job's secret
  bool self = false;
};

struct LastFailure {
  std::optional<int> rank;
  std::string host;
  std::string reason;
};

// (NOLINT: the implicit noexcept move reaches into nlohmann::json, where the check finds throws
// that a move does not make.)
struct StatusAnswer {  // NOLINT(bugprone-exception-escape)
  std::string hostname;
  std::optional<int64_t> agent_pid;
  std::string agent_state;     // "rendezvous", "running", "concluding", "done"
  std::string status_address;  // the agent's own, as it publishes it
  std::optional<int> group_rank;
  std::optional<int> group_world_size;
  std::optional<int> restarts_used;
  std::vector<RankStatus> ranks;
  std::optional<LastFailure> last_failure;
  std::vector<KnownHost> hosts;
  std::string hosts_hidden;  // why other hosts' addresses are null; "" when they are not
  nlohmann::json document;   // the answer as it came
};

// Reads an answer's body. nullopt with *error (a phrase, e.g. "not JSON" or "schema 2, this
// tool reads 1") when the body is not a schema-1 status document.
std::optional<StatusAnswer> ParseStatusAnswer(std::string_view body, std::string* error);

}  // namespace cpplaunch::status
