// Reading /proc about real processes: this test process and a child that burns CPU.

#include "launcher/diagnosis/proc_reader.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

namespace cpplaunch {
namespace {

TEST_CASE("ReadProcStat and TreeCpuTicks of this process", "[agent][proc_reader]") {
  auto stat = ReadProcStat(::getpid());
  REQUIRE(stat);
  CHECK(stat->state == 'R');
  // Burn a little CPU: the tree's ticks (1/100 s) must grow.
  const auto before = TreeCpuTicks(::getpid());
  REQUIRE(before);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  volatile unsigned long spin = 0;
  while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  const auto after = TreeCpuTicks(::getpid());
  REQUIRE(after);
  CHECK(*after > *before);
}

TEST_CASE("A process that is gone reads as nothing", "[agent][proc_reader]") {
  // pid_max is at most 2^22: this pid never exists.
  CHECK_FALSE(ReadProcStat(1 << 23));
  CHECK_FALSE(TreeCpuTicks(1 << 23));
  CHECK(ReadWchan(1 << 23).empty());
  CHECK(ChildrenOf(1 << 23).empty());
}

}  // namespace
}  // namespace cpplaunch
