#include "launcher/status_tool/crawl_frontier.h"

namespace cpplaunch::status {

CrawlFrontier::CrawlFrontier(size_t max_hosts, size_t max_in_flight)
    : max_hosts_(max_hosts), max_in_flight_(max_in_flight) {}

bool CrawlFrontier::Add(CrawlTarget target) {
  if (target.address.empty() || seen_.count(target.address) != 0) return false;
  // Seen even when dropped, so that dropped() counts distinct hosts past the bound, however
  // many agents name them.
  seen_.insert(target.address);
  if (queued_total_ >= max_hosts_) {
    ++dropped_;
    return false;
  }
  ++queued_total_;
  queue_.push_back(std::move(target));
  return true;
}

void CrawlFrontier::MarkSeen(const std::string& address) {
  if (!address.empty()) seen_.insert(address);
}

std::optional<CrawlTarget> CrawlFrontier::Next() {
  if (queue_.empty() || in_flight_ >= max_in_flight_) return std::nullopt;
  CrawlTarget target = std::move(queue_.front());
  queue_.pop_front();
  ++in_flight_;
  return target;
}

void CrawlFrontier::Finished() {
  if (in_flight_ > 0) --in_flight_;
}

}  // namespace cpplaunch::status
