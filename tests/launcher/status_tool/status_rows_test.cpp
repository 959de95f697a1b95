#include "launcher/status_tool/status_rows.h"

#include <catch2/catch.hpp>

#include "status_tool/status_probes.h"

using cpplaunch::status::BuildStatusRows;
using cpplaunch::status::HostProbe;
using cpplaunch::status::RowMark;
using cpplaunch::status::RowSettings;
using namespace cpplaunch::status::testing;

namespace {

const RowSettings kSettings{60, kNow, 0};

}  // namespace

TEST_CASE("BuildStatusRows gives one row per rank, by node rank then rank", "[status_tool]") {
  std::vector<HostProbe> probes = {Answered("b", 1, {Rank(1, 3, 2.0), Rank(0, 2, 1.0)}),
                                   Answered("a", 0, {Rank(0, 0, 1.0), Rank(1, 1, 1.0)})};
  auto result = BuildStatusRows(probes, kSettings);
  REQUIRE(result.rows.size() == 4);
  for (int i = 0; i < 4; ++i) CHECK(result.rows[i].rank == i);
  CHECK(result.rows[0].host == "a");
  CHECK(result.rows[2].node_rank == 1);
  CHECK(result.rows[2].restarts_used == 1);
  CHECK(result.summary.hosts_answered == 2);
  CHECK(result.summary.hosts_known == 2);
  CHECK(result.summary.ranks == 4);
  CHECK(result.summary.silent == 0);
}

TEST_CASE("BuildStatusRows marks running ranks quiet for longer than silent-after",
          "[status_tool]") {
  nlohmann::json ranks = {Rank(0, 0, 61.0), Rank(1, 1, 60.0), Rank(2, 2, std::nullopt, 90),
                          Rank(3, 3, std::nullopt, 10)};
  ranks[0]["state"] = "running";
  nlohmann::json done = Rank(4, 4, 500.0);
  done["state"] = "succeeded";
  ranks.push_back(done);
  auto result = BuildStatusRows({Answered("a", 0, ranks)}, kSettings);
  REQUIRE(result.rows.size() == 5);
  CHECK(result.rows[0].mark == RowMark::kSilent);
  CHECK(result.rows[1].mark == RowMark::kNone);
  CHECK(result.rows[2].mark == RowMark::kSilent);  // nothing written in 90 s since its start
  CHECK(result.rows[2].no_output_yet);
  CHECK(result.rows[2].quiet_seconds == Approx(90));
  CHECK(result.rows[3].mark == RowMark::kNone);
  CHECK(result.rows[4].mark == RowMark::kNone);  // finished: quiet is expected
  CHECK(result.summary.silent == 2);
}

TEST_CASE("BuildStatusRows judges a rank without output by its agent's clock", "[status_tool]") {
  // This machine's clock is an hour ahead; the agent's shows through its other rank's output
  // time and age.
  RowSettings ahead{60, kNow + 3600, 0};
  auto result =
      BuildStatusRows({Answered("a", 0, {Rank(0, 0, 1.0), Rank(1, 1, std::nullopt, 10)})}, ahead);
  CHECK(result.rows[1].quiet_seconds == Approx(10));
  CHECK(result.rows[1].mark == RowMark::kNone);
}

TEST_CASE("BuildStatusRows gives a host that did not answer one row", "[status_tool]") {
  auto result =
      BuildStatusRows({Answered("a", 0, {Rank(0, 0, 1.0)}), Unanswered("10.0.0.2:8000", "b", 1),
                       Unanswered("10.0.0.9:8000", "", std::nullopt)},
                      kSettings);
  REQUIRE(result.rows.size() == 3);
  CHECK(result.rows[1].host == "b (10.0.0.2:8000)");
  CHECK(result.rows[1].mark == RowMark::kNoAnswer);
  CHECK(result.rows[1].detail == "Connection refused");
  CHECK(result.rows[2].host == "10.0.0.9:8000");
  CHECK(result.summary.hosts_answered == 1);
  CHECK(result.summary.hosts_known == 3);
}

TEST_CASE("BuildStatusRows counts an agent asked under two addresses once", "[status_tool]") {
  HostProbe first = Answered("a", 0, {Rank(0, 0, 1.0)});
  HostProbe second = first;
  second.target.address = "127.0.0.1:8000";
  auto result = BuildStatusRows({first, second, Unanswered("x:1", "a", 0)}, kSettings);
  CHECK(result.rows.size() == 1);
  CHECK(result.summary.hosts_answered == 1);
}

TEST_CASE("BuildStatusRows names hosts known without a status address", "[status_tool]") {
  nlohmann::json hosts = {{{"group_rank", 0}, {"hostname", "a"}, {"self", true}},
                          {{"group_rank", 1}, {"hostname", "b"}, {"status_address", nullptr}}};
  auto plain = BuildStatusRows({Answered("a", 0, {Rank(0, 0, 1.0)}, hosts)}, kSettings);
  REQUIRE(plain.rows.size() == 2);
  CHECK(plain.rows[1].mark == RowMark::kNoAddress);
  CHECK(plain.rows[1].detail == "no status endpoint");
  auto hidden = BuildStatusRows(
      {Answered("a", 0, {Rank(0, 0, 1.0)}, hosts, {{"hosts_hidden", "hidden: a secret"}})},
      kSettings);
  CHECK(hidden.rows[1].detail == "address hidden: use --secret-file");
  CHECK(hidden.summary.hosts_hidden == "hidden: a secret");
}

TEST_CASE("BuildStatusRows shows an agent without ranks as one row", "[status_tool]") {
  HostProbe waiting = Answered("a", 0, nlohmann::json::array());
  waiting.answer->agent_state = "rendezvous";
  auto result = BuildStatusRows({waiting}, kSettings);
  REQUIRE(result.rows.size() == 1);
  CHECK(result.rows[0].state == "rendezvous");
  CHECK_FALSE(result.rows[0].rank);
}

TEST_CASE("BuildStatusRows reports the last failure and the crawl's bound", "[status_tool]") {
  nlohmann::json failure = {
      {"last_failure", {{"rank", 3}, {"host", "b"}, {"reason", "exitcode 1"}}}};
  auto result =
      BuildStatusRows({Answered("a", 0, {Rank(0, 0, 1.0)}, {}, failure)}, RowSettings{60, kNow, 7});
  CHECK(result.summary.last_failure == "rank 3 on b: exitcode 1");
  CHECK(result.summary.hosts_not_asked == 7);
}
