#include "launcher/status_tool/status_answer.h"

#include <catch2/catch.hpp>
#include <string>

using cpplaunch::status::ParseStatusAnswer;

namespace {

// The contract's example answer, abridged.
constexpr const char* kAnswer = R"({
  "schema": 1,
  "agent": {"hostname": "vm", "pid": 1234, "state": "running", "uptime_seconds": 12.5,
            "status_address": "127.0.0.1:8000"},
  "job": {"run_id": "r", "backend": "c10d", "nnodes": "1:2", "restarts_used": 2,
          "restarts_left": 1, "max_restarts": 3, "round": 2},
  "host": {"group_rank": 1, "slot": 1, "group_world_size": 2, "world_size": 4,
           "base_rank": 2, "local_world_size": 2},
  "ranks": [
    {"local_rank": 0, "rank": 2, "pid": 4321, "state": "running", "started_at": 1795000000.12,
     "last_output_at": 1795000010.5, "last_output_age_seconds": 1.2, "rss_bytes": 123456789,
     "cpu_share": 0.97, "exit_code": null, "signal": null, "reason": null},
    {"local_rank": 1, "rank": 3, "pid": null, "state": null, "started_at": null,
     "last_output_at": null, "last_output_age_seconds": null, "rss_bytes": null,
     "cpu_share": null}
  ],
  "last_failure": {"rank": 3, "local_rank": 1, "host": "vm", "group_rank": 1,
                   "reason": "exitcode 1", "at": 1795000011.0},
  "hosts": [
    {"group_rank": 0, "hostname": "vm0", "address": "10.0.0.1", "status_address": "10.0.0.1:8000",
     "self": false},
    {"group_rank": 1, "hostname": "vm", "address": null, "status_address": null, "self": true}
  ],
  "hosts_hidden": null
})";

}  // namespace

TEST_CASE("ParseStatusAnswer reads the fields the table shows", "[status_tool]") {
  std::string error;
  auto answer = ParseStatusAnswer(kAnswer, &error);
  REQUIRE(answer);
  CHECK(answer->hostname == "vm");
  CHECK(answer->agent_pid == 1234);
  CHECK(answer->status_address == "127.0.0.1:8000");
  CHECK(answer->group_rank == 1);
  CHECK(answer->group_world_size == 2);
  CHECK(answer->restarts_used == 2);
  REQUIRE(answer->ranks.size() == 2);
  CHECK(answer->ranks[0].rank == 2);
  CHECK(answer->ranks[0].pid == 4321);
  CHECK(answer->ranks[0].rss_bytes == 123456789u);
  CHECK(answer->ranks[0].last_output_age_seconds == Approx(1.2));
  CHECK(answer->ranks[0].cpu_share == Approx(0.97));
  REQUIRE(answer->last_failure);
  CHECK(answer->last_failure->reason == "exitcode 1");
  REQUIRE(answer->hosts.size() == 2);
  CHECK(answer->hosts[0].status_address == "10.0.0.1:8000");
  CHECK(answer->hosts[1].self);
  CHECK(answer->hosts_hidden.empty());
  CHECK(answer->document["job"]["backend"] == "c10d");
}

TEST_CASE("ParseStatusAnswer reads null fields as unknown", "[status_tool]") {
  std::string error;
  auto answer = ParseStatusAnswer(kAnswer, &error);
  REQUIRE(answer);
  const auto& rank = answer->ranks[1];
  CHECK_FALSE(rank.pid);
  CHECK(rank.state.empty());
  CHECK_FALSE(rank.last_output_age_seconds);
  CHECK_FALSE(rank.rss_bytes);
  CHECK(answer->hosts[1].status_address.empty());
}

TEST_CASE("ParseStatusAnswer takes a field of the wrong type as null", "[status_tool]") {
  std::string error;
  auto answer = ParseStatusAnswer(
      R"({"schema": 1, "agent": {"hostname": 7, "pid": "x"}, "ranks": [{"rank": 1.5}, 3],
          "hosts": {"not": "a list"}})",
      &error);
  REQUIRE(answer);
  CHECK(answer->hostname.empty());
  CHECK_FALSE(answer->agent_pid);
  REQUIRE(answer->ranks.size() == 1);
  CHECK_FALSE(answer->ranks[0].rank);
  CHECK(answer->hosts.empty());
}

TEST_CASE("ParseStatusAnswer refuses what is not a schema-1 status document", "[status_tool]") {
  std::string error;
  CHECK_FALSE(ParseStatusAnswer("<html>", &error));
  CHECK(error == "not JSON");
  CHECK_FALSE(ParseStatusAnswer("[1]", &error));
  CHECK(error == "not a JSON object");
  CHECK_FALSE(ParseStatusAnswer(R"({"ok": true})", &error));
  CHECK(error == "no schema field: not a cpplaunch status answer");
  CHECK_FALSE(ParseStatusAnswer(R"({"schema": 2})", &error));
  CHECK(error == "schema 2, this tool reads 1");
}
