#pragma once
// What the table shows, decided from the crawl's probes: one row per rank of every host that
// answered (one row for a host with no ranks yet), one row per host that did not answer or
// could not be asked, which ranks are silent, and the summary's counts. Formatting is
// status_table's. Pure: the caller passes the clock's reading.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launcher/status_tool/host_probe.h"

namespace cpplaunch::status {

enum class RowMark {
  kNone,
  kSilent,     // a running rank quiet for longer than --silent-after
  kNoAnswer,   // the host was asked and did not answer
  kNoAddress,  // the host is known but has no status address (none, or hidden)
};

struct StatusRow {
  std::string host;  // the agent's host name, else the name or address it was known by
  std::optional<int> node_rank;
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::optional<int64_t> pid;
  std::string state;  // the rank's state; the agent's for a host without ranks
  std::optional<int> restarts_used;
  std::optional<double> output_age_seconds;  // since the last output; null: none yet or unknown
  std::optional<double> quiet_seconds;       // since the last output or, without any, the start
  bool no_output_yet = false;
  std::optional<uint64_t> rss_bytes;
  std::optional<double> cpu_share;
  RowMark mark = RowMark::kNone;
  std::string detail;  // kNoAnswer: why; kNoAddress: what the agents said
};

struct StatusSummary {
  size_t hosts_answered = 0;
  size_t hosts_known = 0;  // the answers' group world size when larger than the hosts seen
  size_t ranks = 0;
  size_t silent = 0;
  size_t hosts_not_asked = 0;  // past the crawl's bound
  std::string hosts_hidden;    // an agent's reason for hiding other hosts, "" when none did
  std::string last_failure;    // "rank 3 on vm: exitcode 1", "" when none
};

struct StatusRows {
  std::vector<StatusRow> rows;  // by node rank, then rank; hosts without a node rank last
  StatusSummary summary;
};

struct RowSettings {
  double silent_after_seconds = 60;
  double now_unix_seconds = 0;  // this machine's clock, for ranks whose agent gave no clock
  size_t hosts_not_asked = 0;   // CrawlFrontier::dropped()
};

StatusRows BuildStatusRows(const std::vector<HostProbe>& probes, const RowSettings& settings);

}  // namespace cpplaunch::status
