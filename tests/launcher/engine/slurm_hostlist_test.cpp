#include "launcher/engine/slurm_hostlist.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using Names = std::vector<std::string>;

Names Expand(std::string_view list) {
  std::string error;
  auto names = ExpandHostlist(list, &error);
  INFO(list << ": " << error);
  REQUIRE(names);
  return *names;
}

std::string Error(std::string_view list) {
  std::string error;
  auto names = ExpandHostlist(list, &error);
  INFO(list);
  REQUIRE_FALSE(names);
  REQUIRE_FALSE(error.empty());
  return error;
}

// Every vector checked against `scontrol show hostnames` of slurm-wlm 22.05.8
// (../shared/docs/engines.md, 2.2).
TEST_CASE("hostlist forms Slurm documents") {
  CHECK(Expand("plain") == Names{"plain"});
  CHECK(Expand("node[01-03,07]") == Names{"node01", "node02", "node03", "node07"});
  CHECK(Expand("n[1-2],m[3,5-6]") == Names{"n1", "n2", "m3", "m5", "m6"});
  CHECK(Expand("node[9-11]") == Names{"node9", "node10", "node11"});
  CHECK(Expand("node[009-011]") == Names{"node009", "node010", "node011"});
  CHECK(Expand("tux[3,1-2]") == Names{"tux3", "tux1", "tux2"});
  CHECK(Expand("x[1-2]y[1-2]") == Names{"x1y1", "x1y2", "x2y1", "x2y2"});
  CHECK(Expand("a[1-2]-b[3-4]") == Names{"a1-b3", "a1-b4", "a2-b3", "a2-b4"});
  CHECK(Expand("rack[0-1]_blade[0-1]") ==
        Names{"rack0_blade0", "rack0_blade1", "rack1_blade0", "rack1_blade1"});
  CHECK(Expand("a1,b[2-3],c") == Names{"a1", "b2", "b3", "c"});
  CHECK(Expand("gpu-[001-004,010],cpu[1-2]") ==
        Names{"gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-010", "cpu1", "cpu2"});
  CHECK(Expand("linux[0000-1023]").size() == 1024);
  CHECK(Expand("linux[0000-1023]").back() == "linux1023");
  CHECK(Expand("n[7]") == Names{"n7"});
  CHECK(Expand("n[1-2]") == Names{"n1", "n2"});
}

TEST_CASE("malformed hostlists are one clear error") {
  CHECK(Error("gpu[1-2]x").find("text 'x' after the last ']'") != std::string::npos);
  CHECK(Error("host-[1-3].ib").find("'.ib'") != std::string::npos);
  CHECK(Error("n[1-2").find("unbalanced '['") != std::string::npos);
  CHECK(Error("n1-2]").find("unbalanced ']'") != std::string::npos);
  CHECK(Error("n[1[2]]").find("unbalanced '['") != std::string::npos);
  CHECK(Error("n[]").find("empty brackets") != std::string::npos);
  CHECK(Error("n[5-3]").find("range 5-3 runs backwards") != std::string::npos);
  CHECK(Error("n[a-b]").find("'a-b' in brackets is not a number") != std::string::npos);
  CHECK(Error("n[1-]").find("'1-'") != std::string::npos);
  CHECK(Error("n[1,,2]").find("'' in brackets") != std::string::npos);
  CHECK(Error("a,,b").find("empty host name") != std::string::npos);
  CHECK(Error("").find("empty") != std::string::npos);
  CHECK(Error("n[0-99999999]").find("more than") != std::string::npos);
  CHECK(Error("a[0-9999]b[0-9999]").find("more than") != std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
