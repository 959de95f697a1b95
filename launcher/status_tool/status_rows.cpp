#include "launcher/status_tool/status_rows.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

namespace cpplaunch::status {
namespace {

// The answering agent's clock at the time of its answer, where a rank's output time and age
// give it away; else this machine's. A rank that has written nothing is judged by its start
// time, and hosts' clocks may differ from this one by more than --silent-after.
double AgentNow(const StatusAnswer& answer, double local_now) {
  for (const RankStatus& rank : answer.ranks) {
    if (rank.last_output_at && rank.last_output_age_seconds) {
      return *rank.last_output_at + *rank.last_output_age_seconds;
    }
  }
  return local_now;
}

bool IsRunning(const std::string& state) { return state.empty() || state == "running"; }

StatusRow RankRow(const StatusAnswer& answer, const RankStatus& rank, double agent_now,
                  double silent_after) {
  StatusRow row;
  row.host = answer.hostname;
  row.node_rank = answer.group_rank;
  row.rank = rank.rank;
  row.local_rank = rank.local_rank;
  row.pid = rank.pid;
  row.state = rank.state;
  row.restarts_used = answer.restarts_used;
  row.output_age_seconds = rank.last_output_age_seconds;
  row.no_output_yet = !rank.last_output_age_seconds && !rank.last_output_at;
  if (rank.last_output_age_seconds) {
    row.quiet_seconds = rank.last_output_age_seconds;
  } else if (row.no_output_yet && rank.started_at) {
    row.quiet_seconds = std::max(0.0, agent_now - *rank.started_at);
  }
  row.rss_bytes = rank.rss_bytes;
  row.cpu_share = rank.cpu_share;
  if (IsRunning(rank.state) && row.quiet_seconds && *row.quiet_seconds > silent_after) {
    row.mark = RowMark::kSilent;
  }
  return row;
}

StatusRow HostRow(std::string host, std::optional<int> node_rank, RowMark mark,
                  std::string detail) {
  StatusRow row;
  row.host = std::move(host);
  row.node_rank = node_rank;
  row.mark = mark;
  row.detail = std::move(detail);
  return row;
}

void AddAnswerRows(const StatusAnswer& answer, const RowSettings& settings,
                   std::vector<StatusRow>* rows) {
  if (answer.ranks.empty()) {
    StatusRow row = HostRow(answer.hostname, answer.group_rank, RowMark::kNone, "");
    row.state = answer.agent_state;
    row.restarts_used = answer.restarts_used;
    rows->push_back(std::move(row));
    return;
  }
  double agent_now = AgentNow(answer, settings.now_unix_seconds);
  for (const RankStatus& rank : answer.ranks) {
    rows->push_back(RankRow(answer, rank, agent_now, settings.silent_after_seconds));
  }
}

std::string FailureLine(const LastFailure& failure) {
  std::string line = failure.rank ? "rank " + std::to_string(*failure.rank) : "a rank";
  if (!failure.host.empty()) line += " on " + failure.host;
  if (!failure.reason.empty()) line += ": " + failure.reason;
  return line;
}

// The answers, once per agent: two addresses of one agent (one given, one it publishes) are
// one host.
std::vector<const StatusAnswer*> DistinctAnswers(const std::vector<HostProbe>& probes) {
  std::set<std::pair<std::string, int64_t>> agents;
  std::vector<const StatusAnswer*> answers;
  for (const HostProbe& probe : probes) {
    if (!probe.answer) continue;
    const StatusAnswer& answer = *probe.answer;
    if (answer.agent_pid && !agents.emplace(answer.hostname, *answer.agent_pid).second) continue;
    answers.push_back(&answer);
  }
  return answers;
}

// The hosts the answers name that neither answered nor were asked.
void AddUnaskedRows(const std::vector<const StatusAnswer*>& answers, std::set<int>* covered,
                    std::vector<StatusRow>* rows) {
  for (const StatusAnswer* answer : answers) {
    for (const KnownHost& host : answer->hosts) {
      if (!host.group_rank || !covered->insert(*host.group_rank).second) continue;
      std::string detail = !host.status_address.empty()    ? "not asked: over the crawl's bound"
                           : !answer->hosts_hidden.empty() ? "address hidden: use --secret-file"
                                                           : "no status endpoint";
      rows->push_back(HostRow(host.hostname, host.group_rank, RowMark::kNoAddress, detail));
    }
  }
}

bool RowBefore(const StatusRow& a, const StatusRow& b) {
  auto key = [](const StatusRow& row) {
    return std::make_tuple(!row.node_rank, row.node_rank.value_or(0), row.rank.value_or(-1),
                           row.local_rank.value_or(-1), row.host);
  };
  return key(a) < key(b);
}

}  // namespace

StatusRows BuildStatusRows(const std::vector<HostProbe>& probes, const RowSettings& settings) {
  StatusRows result;
  StatusSummary& summary = result.summary;
  std::vector<const StatusAnswer*> answers = DistinctAnswers(probes);
  std::set<int> covered;
  size_t group_world_size = 0;
  for (const StatusAnswer* answer : answers) {
    AddAnswerRows(*answer, settings, &result.rows);
    if (answer->group_rank) covered.insert(*answer->group_rank);
    group_world_size = std::max<size_t>(group_world_size, answer->group_world_size.value_or(0));
    summary.ranks += answer->ranks.size();
    if (summary.hosts_hidden.empty()) summary.hosts_hidden = answer->hosts_hidden;
    if (summary.last_failure.empty() && answer->last_failure) {
      summary.last_failure = FailureLine(*answer->last_failure);
    }
  }
  summary.hosts_answered = answers.size();
  size_t unanswered = 0;
  for (const HostProbe& probe : probes) {
    if (probe.answer) continue;
    // A host that answered under another address is not also a host that did not.
    if (probe.target.group_rank && !covered.insert(*probe.target.group_rank).second) continue;
    const CrawlTarget& target = probe.target;
    std::string host =
        target.hostname.empty() ? target.address : target.hostname + " (" + target.address + ")";
    result.rows.push_back(HostRow(host, target.group_rank, RowMark::kNoAnswer, probe.error));
    ++unanswered;
  }
  size_t before = result.rows.size();
  AddUnaskedRows(answers, &covered, &result.rows);
  size_t seen = summary.hosts_answered + unanswered + (result.rows.size() - before);
  summary.hosts_known = std::max(seen, group_world_size);
  summary.hosts_not_asked = settings.hosts_not_asked;
  summary.silent = static_cast<size_t>(
      std::count_if(result.rows.begin(), result.rows.end(),
                    [](const StatusRow& row) { return row.mark == RowMark::kSilent; }));
  std::stable_sort(result.rows.begin(), result.rows.end(), RowBefore);
  return result;
}

}  // namespace cpplaunch::status
