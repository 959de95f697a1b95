// Locating a process's memory cgroup and reading its OOM counters, on v1, v2 and hybrid layouts.

#include "launcher/diagnosis/memory_cgroup.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

// This machine's hybrid layout: v1 hierarchies with the memory controller, cgroup2 without.
constexpr const char* kHybridMounts =
    "30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
    "33 30 0:29 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory\n"
    "34 30 0:30 / /sys/fs/cgroup/cpu,cpuacct rw shared:12 - cgroup cgroup rw,cpu,cpuacct\n";
constexpr const char* kHybridCgroup =
    "9:name=systemd:/\n4:memory:/process_api/job1\n2:cpu,cpuacct:/\n0::/\n";

TEST_CASE("LocateMemoryCgroup: hybrid layout uses the v1 memory hierarchy",
          "[agent][memory_cgroup]") {
  auto dir = LocateMemoryCgroup(kHybridCgroup, ParseMountInfo(kHybridMounts));
  REQUIRE(dir);
  CHECK(dir->dir == "/sys/fs/cgroup/memory/process_api/job1");
  CHECK(dir->version == CgroupVersion::kV1);
  CHECK(MemoryFilesOf(dir->version).events == "memory.oom_control");
}

TEST_CASE("LocateMemoryCgroup: pure v2, and a namespaced mount root", "[agent][memory_cgroup]") {
  const auto mounts =
      ParseMountInfo("29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n");
  auto dir = LocateMemoryCgroup("0::/user.slice/job:2\n", mounts);
  REQUIRE(dir);
  CHECK(dir->dir == "/sys/fs/cgroup/user.slice/job:2");
  CHECK(dir->version == CgroupVersion::kV2);
  CHECK(MemoryFilesOf(dir->version).peak == "memory.peak");
  // A container whose cgroup2 mount shows only its own subtree.
  const auto bound =
      ParseMountInfo("40 30 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  auto inner = LocateMemoryCgroup("0::/kubepods/pod1/worker\n", bound);
  REQUIRE(inner);
  CHECK(inner->dir == "/sys/fs/cgroup/worker");
  CHECK_FALSE(LocateMemoryCgroup("0::/other\n", bound));
  CHECK_FALSE(LocateMemoryCgroup("0::/\n", {}));
}

TEST_CASE("Counters, limits and byte counts", "[agent][memory_cgroup]") {
  CHECK(KeyedCounter("low 0\nhigh 0\nmax 4\noom 2\noom_kill 1\noom_group_kill 0\n", "oom_kill") ==
        1u);
  CHECK(KeyedCounter("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill") == 3u);
  CHECK_FALSE(KeyedCounter("oom_kill_disable 0\nunder_oom 0\n", "oom_kill"));
  CHECK(MemoryLimit("67108864\n") == 67108864u);
  CHECK_FALSE(MemoryLimit("max\n"));
  CHECK_FALSE(MemoryLimit("9223372036854771712\n"));  // v1's "unlimited"
  CHECK(ByteCount("1006272512\n") == 1006272512u);
  CHECK_FALSE(ByteCount("99999999999999999999999"));
  CHECK_FALSE(ByteCount(""));
}

}  // namespace
}  // namespace cpplaunch
