#pragma once
// The crawl's bookkeeping, without I/O: which status addresses are still to be asked, in the
// order they were learnt (breadth first), each once, at most `max_hosts` in all, and at most
// `max_in_flight` asked at a time. The caller (job_crawl) asks, then reports each answer with
// Finished(). Pure; one thread.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>

namespace cpplaunch::status {

inline constexpr size_t kMaxCrawlHosts = 10000;
inline constexpr size_t kMaxRequestsInFlight = 32;

// An address to ask, with what the host that named it said about it (for the row of a host
// that does not answer).
struct CrawlTarget {
  std::string address;
  std::string hostname;           // "" for an address given on the command line
  std::optional<int> group_rank;  // likewise
};

class CrawlFrontier {
 public:
  explicit CrawlFrontier(size_t max_hosts = kMaxCrawlHosts,
                         size_t max_in_flight = kMaxRequestsInFlight);

  // Queues `target` unless its address was seen already or the bound is reached (then
  // dropped() counts it). Returns whether it was queued.
  bool Add(CrawlTarget target);
  // Records an address as seen without asking it: an agent that answered under one address
  // names itself under another.
  void MarkSeen(const std::string& address);
  // The next address to ask, or nullopt when none is queued or max_in_flight are out.
  std::optional<CrawlTarget> Next();
  // One asked address has its outcome.
  void Finished();
  // Nothing queued and nothing out: the crawl is over.
  bool complete() const { return queue_.empty() && in_flight_ == 0; }
  size_t dropped() const { return dropped_; }

 private:
  size_t max_hosts_;
  size_t max_in_flight_;
  std::deque<CrawlTarget> queue_;
  std::unordered_set<std::string> seen_;
  size_t queued_total_ = 0;
  size_t in_flight_ = 0;
  size_t dropped_ = 0;
};

}  // namespace cpplaunch::status
