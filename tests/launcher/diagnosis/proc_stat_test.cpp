// Parsing /proc/<pid>/stat.

#include "launcher/diagnosis/proc_stat.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("ParseProcStat: state and CPU ticks, with a command name holding ') '",
          "[agent][proc_stat]") {
  const auto stat = ParseProcStat(
      "4242 (evil) R (x) D 1 4242 4242 0 -1 4194560 300 0 0 0 170 30 5 7 20 0 4 0 123 "
      "1000 50 18446744073709551615\n");
  REQUIRE(stat);
  CHECK(stat->state == 'D');
  CHECK(stat->own_ticks == 200);
  CHECK(stat->children_ticks == 12);
}

TEST_CASE("ParseProcStat: refuses what is not a stat line", "[agent][proc_stat]") {
  CHECK_FALSE(ParseProcStat(""));
  CHECK_FALSE(ParseProcStat("4242 (x) S 1 2 3"));
  CHECK_FALSE(ParseProcStat("4242 (x) S 1 2 3 4 5 6 7 8 9 10 eleven 12 13 14"));
}

}  // namespace
}  // namespace cpplaunch
