#include "launcher/status_tool/status_document.h"

#include <set>
#include <string>
#include <utility>

namespace cpplaunch::status {
namespace {

using nlohmann::json;

json Unreachable(const HostProbe& probe) {
  const CrawlTarget& target = probe.target;
  return {{"status_address", target.address},
          {"hostname", target.hostname.empty() ? json() : json(target.hostname)},
          {"group_rank", target.group_rank ? json(*target.group_rank) : json()},
          {"error", probe.error}};
}

json Summary(const StatusSummary& summary) {
  return {{"hosts_answered", summary.hosts_answered},
          {"hosts_known", summary.hosts_known},
          {"hosts_not_asked", summary.hosts_not_asked},
          {"ranks", summary.ranks},
          {"silent", summary.silent}};
}

}  // namespace

json StatusDocument(const std::vector<HostProbe>& probes, const StatusSummary& summary) {
  json hosts = json::array();
  json unreachable = json::array();
  // The same key as the table's: the agent's host name and pid.
  std::set<std::pair<std::string, int64_t>> agents;
  for (const HostProbe& probe : probes) {
    if (!probe.answer) {
      unreachable.push_back(Unreachable(probe));
      continue;
    }
    const StatusAnswer& answer = *probe.answer;
    if (answer.agent_pid && !agents.emplace(answer.hostname, *answer.agent_pid).second) continue;
    hosts.push_back(answer.document);
  }
  return {{"hosts", std::move(hosts)},
          {"unreachable", std::move(unreachable)},
          {"summary", Summary(summary)}};
}

}  // namespace cpplaunch::status
