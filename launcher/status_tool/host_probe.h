#pragma once
// What the crawl learnt about one status address: the agent's answer, or why there is none.
// The crawl (job_crawl) fills these; the table (status_rows, status_table) and the JSON
// document (status_document) read them. Pure.

#include <optional>
#include <string>
#include <string_view>

#include "launcher/status_tool/crawl_frontier.h"
#include "launcher/status_tool/status_answer.h"

namespace cpplaunch::status {

struct HostProbe {
  CrawlTarget target;                  // the address asked, and what its referrer said of it
  std::optional<StatusAnswer> answer;  // the /status answer, when one came
  // Why no answer, one phrase: "Connection refused", "no answer within 2.0 s",
  // "HTTP 404 (not a cpplaunch status endpoint?)", "not JSON".
  std::string error;
  bool connected = false;  // an HTTP answer came (then `error` says what was wrong with it)
};

// The probe of `target` from what the request gave: `transport_error` ("" when an HTTP answer
// came), the answer's status and body.
HostProbe ReadProbe(CrawlTarget target, const std::string& transport_error, int http_status,
                    std::string_view body);

// Queues every host `answer` names that has a status address, and marks the agent's own
// address seen, so an agent asked under another name is not asked again.
void LearnHosts(const StatusAnswer& answer, CrawlFrontier* frontier);

}  // namespace cpplaunch::status
