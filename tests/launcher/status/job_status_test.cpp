#include "launcher/status/job_status.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace cpplaunch {
namespace {

using Json = nlohmann::json;

JobStatus TwoHosts() {
  JobStatus status;
  status.hostname = "host-a";
  status.pid = 42;
  status.status_address = "10.0.0.1:8000";
  status.run_id = "job7";
  status.backend = "c10d";
  status.nnodes = "1:2";
  status.max_restarts = 3;
  status.agent_started_at = 100;
  status.phase = AgentPhase::kRunning;
  status.restarts_used = 1;
  status.round = 2;
  status.placed = true;
  status.group_rank = 1;
  status.group_world_size = 2;
  status.world_size = 4;
  status.base_rank = 2;
  status.local_world_size = 2;
  RankStatus rank;
  rank.local_rank = 0;
  rank.rank = 2;
  rank.pid = 4321;
  rank.started_at = 110;
  rank.last_output_at = 115;
  rank.rss_bytes = 1 << 20;
  status.ranks.push_back(rank);
  rank.local_rank = 1;
  rank.rank = 3;
  rank.state = RankState::kFailed;
  rank.exit_code = 1;
  rank.reason = "exitcode 1";
  rank.last_output_at.reset();
  status.ranks.push_back(rank);
  status.hosts = {{0, "host-b", "10.0.0.2", "10.0.0.2:8000", false},
                  {1, "host-a", "10.0.0.1", "10.0.0.1:8000", true}};
  return status;
}

}  // namespace

TEST_CASE("/status answers schema 1 with the job, this host, each rank and the hosts") {
  const Json answer = Json::parse(StatusJson(TwoHosts(), 120, /*show_peer_addresses=*/true));
  CHECK(answer["schema"] == 1);
  CHECK(answer["agent"]["state"] == "running");
  CHECK(answer["agent"]["uptime_seconds"] == 20.0);
  CHECK(answer["job"]["restarts_used"] == 1);
  CHECK(answer["job"]["restarts_left"] == 2);
  CHECK(answer["job"]["backend"] == "c10d");
  CHECK(answer["host"]["group_rank"] == 1);
  CHECK(answer["host"]["slot"] == 1);
  CHECK(answer["host"]["base_rank"] == 2);
  REQUIRE(answer["ranks"].size() == 2);
  CHECK(answer["ranks"][0]["rank"] == 2);
  CHECK(answer["ranks"][0]["last_output_age_seconds"] == 5.0);
  CHECK(answer["ranks"][0]["exit_code"].is_null());
  CHECK(answer["ranks"][1]["state"] == "failed");
  CHECK(answer["ranks"][1]["exit_code"] == 1);
  CHECK(answer["ranks"][1]["last_output_at"].is_null());
  CHECK(answer["ranks"][1]["last_output_age_seconds"].is_null());
  CHECK(answer["hosts"][0]["status_address"] == "10.0.0.2:8000");
  CHECK(answer["hosts_hidden"].is_null());
  CHECK(answer["last_failure"].is_null());
}

TEST_CASE("Without the secret's proof, other hosts' addresses are hidden, and it says so") {
  const Json answer = Json::parse(StatusJson(TwoHosts(), 120, /*show_peer_addresses=*/false));
  CHECK(answer["hosts"][0]["hostname"] == "host-b");
  CHECK(answer["hosts"][0]["address"].is_null());
  CHECK(answer["hosts"][0]["status_address"].is_null());
  CHECK(answer["hosts"][1]["address"] == "10.0.0.1");  // its own
  CHECK(answer["hosts_hidden"].get<std::string>().find("secret") != std::string::npos);
}

TEST_CASE("Before the first round, this host's place is null") {
  JobStatus status;
  status.backend = "none";
  const Json answer = Json::parse(StatusJson(status, 0, true));
  CHECK(answer["agent"]["state"] == "rendezvous");
  CHECK(answer["host"]["group_rank"].is_null());
  CHECK(answer["ranks"].empty());
}

TEST_CASE("A host name that is not UTF-8 still makes valid JSON") {
  JobStatus status;
  status.hostname = "bad\xff";
  CHECK_NOTHROW(Json::parse(StatusJson(status, 0, true)));
}

}  // namespace cpplaunch
