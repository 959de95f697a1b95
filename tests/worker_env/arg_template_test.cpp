#include "worker_env/arg_template.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("SubstituteLocalRank follows string.Template.safe_substitute") {
  CHECK(SubstituteLocalRank("$local_rank", 3) == "3");
  CHECK(SubstituteLocalRank("${local_rank}", 3) == "3");
  CHECK(SubstituteLocalRank("--out=/tmp/r${local_rank}.log", 12) == "--out=/tmp/r12.log");
  CHECK(SubstituteLocalRank("a$$b", 0) == "a$b");
  CHECK(SubstituteLocalRank("$$local_rank", 1) == "$local_rank");
  CHECK(SubstituteLocalRank("$other", 1) == "$other");
  CHECK(SubstituteLocalRank("${other}", 1) == "${other}");
  CHECK(SubstituteLocalRank("$LOCAL_RANK", 1) == "$LOCAL_RANK");
  CHECK(SubstituteLocalRank("$local_ranks", 1) == "$local_ranks");
  CHECK(SubstituteLocalRank("$", 1) == "$");
  CHECK(SubstituteLocalRank("${local_rank", 1) == "${local_rank");
  CHECK(SubstituteLocalRank("x$local_rank.y", 4) == "x4.y");
}

}  // namespace
}  // namespace cpplaunch
