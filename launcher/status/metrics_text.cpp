#include "launcher/status/metrics_text.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace cpplaunch {
namespace {

// The shortest of 15 or 17 significant digits that reads back as the same double ("0.05", not
// "0.050000000000000003").
std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  if (std::strtod(text, nullptr) != value) std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

class Writer {
 public:
  void Family(const char* name, const char* type, const char* help) {
    text_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void Sample(const std::string& name, const std::string& labels, double value) {
    text_ += name + (labels.empty() ? "" : "{" + labels + "}") + " " + Number(value) + "\n";
  }
  std::string& text() { return text_; }

 private:
  std::string text_;
};

std::string RankLabels(const RankStatus& rank) {
  return "local_rank=\"" + std::to_string(rank.local_rank) + "\",rank=\"" +
         std::to_string(rank.rank) + "\"";
}

void WriteJob(Writer& out, const JobStatus& status) {
  out.Family("cpplaunch_info", "gauge", "The job this agent runs; always 1.");
  out.Sample("cpplaunch_info",
             "run_id=\"" + EscapeLabel(status.run_id) + "\",backend=\"" +
                 EscapeLabel(status.backend) + "\",hostname=\"" + EscapeLabel(status.hostname) +
                 "\"",
             1);
  out.Family("cpplaunch_agent_state", "gauge", "1 for the agent's current phase.");
  for (AgentPhase phase : {AgentPhase::kRendezvous, AgentPhase::kRunning, AgentPhase::kConcluding,
                           AgentPhase::kDone}) {
    out.Sample("cpplaunch_agent_state", std::string("state=\"") + PhaseName(phase) + "\"",
               phase == status.phase ? 1 : 0);
  }
  out.Family("cpplaunch_restarts_total", "counter", "Restarts of the job's workers so far.");
  out.Sample("cpplaunch_restarts_total", "", status.restarts_used);
  out.Family("cpplaunch_max_restarts", "gauge", "The restarts the job allows (--max-restarts).");
  out.Sample("cpplaunch_max_restarts", "", status.max_restarts);
}

void WriteRendezvous(Writer& out, const JobStatus& status) {
  out.Family("cpplaunch_rendezvous_rounds_total", "counter", "Rendezvous rounds completed.");
  out.Sample("cpplaunch_rendezvous_rounds_total", "",
             static_cast<double>(status.rendezvous_seconds.size()));
  out.Family("cpplaunch_rendezvous_duration_seconds", "histogram",
             "How long each rendezvous took, from the agent's start or the last attempt's end.");
  double sum = 0;
  for (double seconds : status.rendezvous_seconds) sum += seconds;
  for (double bound : kRendezvousBuckets) {
    std::uint64_t count = 0;
    for (double seconds : status.rendezvous_seconds) count += seconds <= bound ? 1 : 0;
    out.Sample("cpplaunch_rendezvous_duration_seconds_bucket", "le=\"" + Number(bound) + "\"",
               static_cast<double>(count));
  }
  const auto total = static_cast<double>(status.rendezvous_seconds.size());
  out.Sample("cpplaunch_rendezvous_duration_seconds_bucket", "le=\"+Inf\"", total);
  out.Sample("cpplaunch_rendezvous_duration_seconds_sum", "", sum);
  out.Sample("cpplaunch_rendezvous_duration_seconds_count", "", total);
}

void WriteWorkers(Writer& out, const JobStatus& status, double now) {
  int running = 0;
  for (const RankStatus& rank : status.ranks) running += rank.state == RankState::kRunning;
  out.Family("cpplaunch_workers_running", "gauge", "This host's workers that run now.");
  out.Sample("cpplaunch_workers_running", "", running);
  out.Family("cpplaunch_worker_resident_memory_bytes", "gauge",
             "Resident memory of each running worker process.");
  for (const RankStatus& rank : status.ranks) {
    if (rank.rss_bytes) {
      out.Sample("cpplaunch_worker_resident_memory_bytes", RankLabels(rank),
                 static_cast<double>(*rank.rss_bytes));
    }
  }
  out.Family("cpplaunch_worker_cpu_seconds_total", "counter",
             "CPU time of each running worker's process tree.");
  for (const RankStatus& rank : status.ranks) {
    if (rank.cpu_seconds) {
      out.Sample("cpplaunch_worker_cpu_seconds_total", RankLabels(rank), *rank.cpu_seconds);
    }
  }
  out.Family("cpplaunch_worker_last_output_age_seconds", "gauge",
             "Seconds since each running worker's last output (since its start before any).");
  for (const RankStatus& rank : status.ranks) {
    if (rank.state != RankState::kRunning) continue;
    out.Sample("cpplaunch_worker_last_output_age_seconds", RankLabels(rank),
               now - rank.last_output_at.value_or(rank.started_at));
  }
}

void WriteStore(Writer& out, const StoreFigures& store) {
  const struct {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t value;
  } families[] = {
      {"cpplaunch_store_requests_total", "counter", "Requests the store answered.", store.requests},
      {"cpplaunch_store_refused_total", "counter",
       "Requests and connections the store refused (budget, protocol, peers).", store.refused},
      {"cpplaunch_store_connections", "gauge", "Open connections to the store.", store.connections},
      {"cpplaunch_store_keys", "gauge", "Keys the store holds.", store.keys},
      {"cpplaunch_store_budget_used_bytes", "gauge",
       "Bytes held against the store's memory budget.", store.budget_used_bytes},
      {"cpplaunch_store_budget_bytes", "gauge", "The store's memory budget.",
       store.budget_total_bytes},
  };
  for (const auto& family : families) {
    out.Family(family.name, family.type, family.help);
    out.Sample(family.name, "", static_cast<double>(family.value));
  }
}

}  // namespace

std::string EscapeLabel(const std::string& value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string MetricsText(const JobStatus& status, double now) {
  Writer out;
  WriteJob(out, status);
  WriteRendezvous(out, status);
  WriteWorkers(out, status, now);
  if (status.store) WriteStore(out, *status.store);
  return std::move(out.text());
}

}  // namespace cpplaunch
