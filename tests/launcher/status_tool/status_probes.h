#pragma once
// Probes for the status tool's tests: an answering agent built from a few facts, and a host
// that did not answer.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "launcher/status_tool/host_probe.h"

namespace cpplaunch::status::testing {

inline constexpr double kNow = 1795000100;

// A running rank; `age` null: nothing written yet (then it started `since_start` ago).
inline nlohmann::json Rank(int local, int rank, std::optional<double> age,
                           double since_start = 30) {
  nlohmann::json item = {{"local_rank", local},
                         {"rank", rank},
                         {"pid", 4000 + rank},
                         {"state", "running"},
                         {"started_at", kNow - since_start},
                         {"rss_bytes", 64 << 20},
                         {"cpu_share", 0.5}};
  item["last_output_age_seconds"] = age ? nlohmann::json(*age) : nlohmann::json();
  item["last_output_at"] = age ? nlohmann::json(kNow - *age) : nlohmann::json();
  return item;
}

inline HostProbe Answered(const std::string& host, int group_rank, nlohmann::json ranks,
                          nlohmann::json hosts = nlohmann::json::array(),
                          nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json document = {
      {"schema", 1},
      {"agent", {{"hostname", host}, {"pid", 100 + group_rank}, {"state", "running"}}},
      {"job", {{"restarts_used", 1}}},
      {"host", {{"group_rank", group_rank}, {"group_world_size", 2}}},
      {"ranks", std::move(ranks)},
      {"hosts", std::move(hosts)}};
  document.update(extra);
  return ReadProbe(CrawlTarget{host + ":8000", "", {}}, "", 200, document.dump());
}

inline HostProbe Unanswered(const std::string& address, const std::string& host,
                            std::optional<int> group_rank) {
  return ReadProbe(CrawlTarget{address, host, group_rank}, "Connection refused", 0, "");
}

}  // namespace cpplaunch::status::testing
