#include "launcher/status/job_status.h"

#include <nlohmann/json.hpp>

namespace cpplaunch {
namespace {

using Json = nlohmann::json;

template <typename T>
Json OrNull(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json TextOrNull(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

Json RankJson(const RankStatus& rank, double now) {
  return Json{
      {"local_rank", rank.local_rank},
      {"rank", rank.rank},
      {"pid", rank.pid},
      {"state", RankStateName(rank.state)},
      {"started_at", rank.started_at},
      {"last_output_at", OrNull(rank.last_output_at)},
      {"last_output_age_seconds",
       rank.last_output_at ? Json(now - *rank.last_output_at) : Json(nullptr)},
      {"rss_bytes", OrNull(rank.rss_bytes)},
      {"cpu_share", OrNull(rank.cpu_share)},
      {"exit_code", OrNull(rank.exit_code)},
      {"signal", TextOrNull(rank.signal)},
      {"reason", TextOrNull(rank.reason)},
  };
}

Json HostJson(const HostStatus& host, bool show_address) {
  const bool shown = show_address || host.self;
  return Json{
      {"group_rank", host.group_rank},
      {"hostname", host.hostname},
      {"address", shown ? TextOrNull(host.address) : Json(nullptr)},
      {"status_address", shown ? TextOrNull(host.status_address) : Json(nullptr)},
      {"self", host.self},
  };
}

}  // namespace

const char* PhaseName(AgentPhase phase) {
  switch (phase) {
    case AgentPhase::kRendezvous:
      return "rendezvous";
    case AgentPhase::kRunning:
      return "running";
    case AgentPhase::kConcluding:
      return "concluding";
    case AgentPhase::kDone:
      return "done";
  }
  return "unknown";
}

const char* RankStateName(RankState state) {
  switch (state) {
    case RankState::kRunning:
      return "running";
    case RankState::kSucceeded:
      return "succeeded";
    case RankState::kFailed:
      return "failed";
    case RankState::kStopped:
      return "stopped";
  }
  return "unknown";
}

std::string StatusJson(const JobStatus& status, double now, bool show_peer_addresses) {
  Json ranks = Json::array();
  for (const RankStatus& rank : status.ranks) ranks.push_back(RankJson(rank, now));
  Json hosts = Json::array();
  for (const HostStatus& host : status.hosts) hosts.push_back(HostJson(host, show_peer_addresses));
  Json failure = nullptr;
  if (const auto& f = status.last_failure) {
    failure = Json{{"rank", f->rank}, {"local_rank", f->local_rank}, {"group_rank", f->group_rank},
                   {"host", f->host}, {"reason", f->reason},         {"at", f->at}};
  }
  const auto placed = [&status](int value) { return status.placed ? Json(value) : Json(nullptr); };
  Json answer{
      {"schema", 1},
      {"agent",
       {{"hostname", status.hostname},
        {"pid", status.pid},
        {"state", PhaseName(status.phase)},
        {"uptime_seconds", now - status.agent_started_at},
        {"status_address", status.status_address}}},
      {"job",
       {{"run_id", status.run_id},
        {"backend", status.backend},
        {"nnodes", status.nnodes},
        {"restarts_used", status.restarts_used},
        {"restarts_left", std::max(0, status.max_restarts - status.restarts_used)},
        {"max_restarts", status.max_restarts},
        {"round", status.round}}},
      {"host",
       {{"group_rank", placed(status.group_rank)},
        {"slot", placed(status.group_rank)},
        {"group_world_size", placed(status.group_world_size)},
        {"world_size", placed(status.world_size)},
        {"base_rank", placed(status.base_rank)},
        {"local_world_size", placed(status.local_world_size)}}},
      {"ranks", std::move(ranks)},
      {"last_failure", std::move(failure)},
      {"hosts", std::move(hosts)},
      {"hosts_hidden", show_peer_addresses
                           ? Json(nullptr)
                           : Json("the job has a secret: other hosts' addresses need its proof "
                                  "(cpplaunch-status --secret-file)")},
  };
  // Replacement characters for invalid UTF-8 (a host name is the kernel's bytes).
  return answer.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace cpplaunch
