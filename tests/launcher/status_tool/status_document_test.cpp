#include "launcher/status_tool/status_document.h"

#include <catch2/catch.hpp>

#include "status_tool/status_probes.h"

using cpplaunch::status::BuildStatusRows;
using cpplaunch::status::RowSettings;
using cpplaunch::status::StatusDocument;
using namespace cpplaunch::status::testing;

TEST_CASE("StatusDocument holds every answer as it came and the unreachable hosts",
          "[status_tool]") {
  std::vector<cpplaunch::status::HostProbe> probes = {
      Answered("a", 0, {Rank(0, 0, 1.0)}), Answered("a", 0, {Rank(0, 0, 1.0)}),
      Unanswered("10.0.0.2:8000", "b", 1), Unanswered("10.0.0.9:8000", "", std::nullopt)};
  auto rows = BuildStatusRows(probes, RowSettings{60, kNow, 0});
  nlohmann::json document = StatusDocument(probes, rows.summary);
  REQUIRE(document["hosts"].size() == 1);  // one agent, asked twice
  CHECK(document["hosts"][0]["agent"]["hostname"] == "a");
  CHECK(document["hosts"][0]["ranks"][0]["rss_bytes"] == 64 << 20);
  CHECK(document["unreachable"] == nlohmann::json::parse(R"([
          {"status_address": "10.0.0.2:8000", "hostname": "b", "group_rank": 1,
           "error": "Connection refused"},
          {"status_address": "10.0.0.9:8000", "hostname": null, "group_rank": null,
           "error": "Connection refused"}])"));
  CHECK(document["summary"] == nlohmann::json::parse(R"({"hosts_answered": 1, "hosts_known": 3,
          "hosts_not_asked": 0, "ranks": 1, "silent": 0})"));
}
