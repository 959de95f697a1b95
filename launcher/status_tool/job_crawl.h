#pragma once
// The crawl: asks the given agents' /status, then every host their answers name, breadth first,
// each address once, at most kMaxCrawlHosts in all and kMaxRequestsInFlight at a time, each
// request under its own deadline. The policy is CrawlFrontier's and ReadProbe's; this is the
// shell that runs it on one io_context.
//
// Threads: the calling coroutine's executor, which must run on one thread. Errors: nothing
// throws; an address that fails is a probe with its error. Blocking: never; a crawl takes at
// most about (hosts / in flight + 1) * timeout.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "base/asio_coroutine.h"
#include "launcher/status_tool/crawl_frontier.h"
#include "launcher/status_tool/host_probe.h"

namespace cpplaunch::status {

struct CrawlSettings {
  std::chrono::milliseconds timeout{2000};  // per request
  std::string secret;  // the job's secret: every request then carries a proof; "" for none
  size_t max_hosts = kMaxCrawlHosts;
  size_t max_in_flight = kMaxRequestsInFlight;
};

struct CrawlResult {
  std::vector<HostProbe> probes;  // in the order the answers came
  size_t hosts_not_asked = 0;     // named, but past max_hosts
};

// `seeds`: status addresses (HOST:PORT) to start from; an unparsable one is a failed probe.
boost::asio::awaitable<CrawlResult> CrawlJob(std::vector<std::string> seeds,
                                             CrawlSettings settings);

}  // namespace cpplaunch::status
