#include "launcher/status_tool/status_table.h"

#include <catch2/catch.hpp>

#include "status_tool/status_probes.h"

using cpplaunch::status::BuildStatusRows;
using cpplaunch::status::FormatAge;
using cpplaunch::status::RenderStatusTable;
using cpplaunch::status::RowSettings;
using namespace cpplaunch::status::testing;

TEST_CASE("FormatAge writes whole seconds, then minutes, then hours", "[status_tool]") {
  CHECK(FormatAge(-1) == "0 s");
  CHECK(FormatAge(3.7) == "3 s");
  CHECK(FormatAge(119.9) == "119 s");
  CHECK(FormatAge(120) == "2 min");
  CHECK(FormatAge(7199) == "119 min");
  CHECK(FormatAge(7200) == "2 h");
}

TEST_CASE("RenderStatusTable aligns the columns and marks what needs a look", "[status_tool]") {
  auto rows = BuildStatusRows({Answered("vm-a", 0, {Rank(0, 0, 3.2), Rank(1, 1, 75.0)}),
                               Unanswered("10.0.0.2:8000", "vm-b", 1)},
                              RowSettings{60, kNow, 0});
  CHECK(RenderStatusTable(rows, 60) ==
        "   HOST                  NODE  RANK  LOCAL  PID   STATE    RESTARTS  LAST OUTPUT  RSS "
        "      CPU  NOTE\n"
        "   vm-a                  0     0     0      4000  running  1         3 s          64.0 "
        "MiB  50%\n"
        "!  vm-a                  0     1     1      4001  running  1         75 s         64.0 "
        "MiB  50%  silent for 75 s\n"
        "!  vm-b (10.0.0.2:8000)  1     -     -      -     -        -         -            -   "
        "      -    no answer: Connection refused\n"
        "1 of 2 hosts answered, 2 ranks, 1 silent (no output for over 60 s)\n");
}

TEST_CASE("RenderStatusTable says when a rank has written nothing", "[status_tool]") {
  auto rows = BuildStatusRows({Answered("vm", 0, {Rank(0, 0, std::nullopt, 200)})},
                              RowSettings{60, kNow, 0});
  std::string table = RenderStatusTable(rows, 60);
  CHECK_THAT(table, Catch::Contains("no output yet"));
  CHECK_THAT(table, Catch::Contains("silent: nothing written in 3 min"));
}

TEST_CASE("RenderStatusTable's summary names the failure, hidden hosts and the bound",
          "[status_tool]") {
  nlohmann::json extra = {{"last_failure", {{"rank", 3}, {"host", "b"}, {"reason", "exitcode 1"}}},
                          {"hosts_hidden", "addresses hidden"}};
  auto rows =
      BuildStatusRows({Answered("a", 0, {Rank(0, 0, 1.0)}, {}, extra)}, RowSettings{60, kNow, 4});
  std::string table = RenderStatusTable(rows, 60);
  CHECK_THAT(table, Catch::EndsWith("1 of 2 hosts answered, 1 ranks, 0 silent; 4 more hosts not "
                                    "asked; last failure: rank 3 on b: exitcode 1; addresses "
                                    "hidden\n"));
}
