#include "launcher/status_tool/host_probe.h"

#include <utility>

namespace cpplaunch::status {

HostProbe ReadProbe(CrawlTarget target, const std::string& transport_error, int http_status,
                    std::string_view body) {
  HostProbe probe{std::move(target), std::nullopt, transport_error, false};
  if (!transport_error.empty()) return probe;
  probe.connected = true;
  if (http_status != 200) {
    probe.error = "answered HTTP " + std::to_string(http_status) + ", not a status document";
    return probe;
  }
  std::string why;
  probe.answer = ParseStatusAnswer(body, &why);
  if (!probe.answer) probe.error = "answered " + why;
  return probe;
}

void LearnHosts(const StatusAnswer& answer, CrawlFrontier* frontier) {
  frontier->MarkSeen(answer.status_address);
  for (const KnownHost& host : answer.hosts) {
    if (host.self) frontier->MarkSeen(host.status_address);
    frontier->Add(CrawlTarget{host.status_address, host.hostname, host.group_rank});
  }
}

}  // namespace cpplaunch::status
