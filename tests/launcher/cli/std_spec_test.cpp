#include "launcher/cli/std_spec.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

StdSpec Parse(std::string_view text) {
  std::string error;
  auto spec = StdSpec::Parse(text, &error);
  INFO(error);
  REQUIRE(spec);
  return *spec;
}

TEST_CASE("a single value applies to every local rank") {
  CHECK(Parse("0").bits_for(0) == 0);
  const StdSpec both = Parse("3");
  CHECK(both.stdout_for(0));
  CHECK(both.stderr_for(17));
  CHECK_FALSE(both.is_map());
  const StdSpec out = Parse("1");
  CHECK(out.stdout_for(5));
  CHECK_FALSE(out.stderr_for(5));
  CHECK(Parse("2").bits_for(1) == StdSpec::kStderr);
  CHECK(StdSpec().bits_for(0) == 0);
}

TEST_CASE("a map names single-digit local ranks; others get nothing") {
  const StdSpec spec = Parse("0:1,1:2,3:3");
  CHECK(spec.is_map());
  CHECK(spec.bits_for(0) == 1);
  CHECK(spec.bits_for(1) == 2);
  CHECK(spec.bits_for(2) == 0);
  CHECK(spec.bits_for(3) == 3);
  CHECK(Parse("9:1").bits_for(0) == 0);      // the Debian torchrun oracle spelling
  CHECK(Parse("0:1,0:2").bits_for(0) == 2);  // last wins
}

TEST_CASE("anything else is rejected with one line that says what fits") {
  for (std::string_view bad :
       {"", "4", "-1", "01", "10:1", "0:4", "0:1,", ",0:1", "0:1 ,1:2", "a", "0=1", " 1", "1 "}) {
    std::string error;
    INFO(bad);
    CHECK_FALSE(StdSpec::Parse(bad, &error));
    CHECK(error ==
          "'" + std::string(bad) +
              "' does not match: give one of 0-3 for every local rank (0 none, 1 stdout, 2 "
              "stderr, 3 both), or local_rank:value pairs such as 0:3,1:2");
  }
}

}  // namespace
}  // namespace cpplaunch
