#include "launcher/status/metrics_text.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("Metrics: families with HELP and TYPE, base units, a histogram of the rounds") {
  JobStatus status;
  status.run_id = "job\"7";
  status.backend = "c10d";
  status.hostname = "host-a";
  status.phase = AgentPhase::kRunning;
  status.restarts_used = 2;
  status.max_restarts = 3;
  status.rendezvous_seconds = {0.02, 0.7, 45};
  RankStatus rank;
  rank.local_rank = 1;
  rank.rank = 5;
  rank.started_at = 100;
  rank.last_output_at = 104;
  rank.rss_bytes = 2048;
  rank.cpu_seconds = 1.5;
  status.ranks.push_back(rank);
  status.store = StoreFigures{10, 1, 3, 7, 4096, 1 << 30};
  const std::string text = MetricsText(status, 110);
  CHECK(text.rfind("# HELP cpplaunch_info ", 0) == 0);
  CHECK(Has(text, R"(cpplaunch_info{run_id="job\"7",backend="c10d",hostname="host-a"} 1)"));
  CHECK(Has(text, "# TYPE cpplaunch_restarts_total counter"));
  CHECK(Has(text, "cpplaunch_restarts_total 2"));
  CHECK(Has(text, R"(cpplaunch_agent_state{state="running"} 1)"));
  CHECK(Has(text, R"(cpplaunch_agent_state{state="done"} 0)"));
  CHECK(Has(text, "# TYPE cpplaunch_rendezvous_duration_seconds histogram"));
  CHECK(Has(text, R"(cpplaunch_rendezvous_duration_seconds_bucket{le="0.05"} 1)"));
  CHECK(Has(text, R"(cpplaunch_rendezvous_duration_seconds_bucket{le="1"} 2)"));
  CHECK(Has(text, R"(cpplaunch_rendezvous_duration_seconds_bucket{le="60"} 3)"));
  CHECK(Has(text, R"(cpplaunch_rendezvous_duration_seconds_bucket{le="+Inf"} 3)"));
  CHECK(Has(text, "cpplaunch_rendezvous_duration_seconds_count 3"));
  CHECK(Has(text, "cpplaunch_workers_running 1"));
  CHECK(Has(text, R"(cpplaunch_worker_resident_memory_bytes{local_rank="1",rank="5"} 2048)"));
  CHECK(Has(text, R"(cpplaunch_worker_cpu_seconds_total{local_rank="1",rank="5"} 1.5)"));
  CHECK(Has(text, R"(cpplaunch_worker_last_output_age_seconds{local_rank="1",rank="5"} 6)"));
  CHECK(Has(text, "cpplaunch_store_requests_total 10"));
  CHECK(Has(text, "cpplaunch_store_budget_bytes 1073741824"));
}

TEST_CASE("Metrics: no store family on a host that serves no store") {
  JobStatus status;
  CHECK(MetricsText(status, 0).find("cpplaunch_store_") == std::string::npos);
}

TEST_CASE("Label values escape backslash, quote and newline") {
  CHECK(EscapeLabel("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
}

}  // namespace cpplaunch
