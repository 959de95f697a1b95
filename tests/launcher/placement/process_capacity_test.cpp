#include "launcher/placement/process_capacity.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("ProcessCapacityProblem: --nproc-per-node within every PID limit is fine",
          "[launcher][process_capacity]") {
  posix::PidLimits limits;
  CHECK_FALSE(ProcessCapacityProblem(100000, limits));  // no limit known: nothing to judge
  limits.pid_max_free = 30000;
  limits.threads_max_free = 60000;
  limits.nproc_rlimit = 1000;
  CHECK_FALSE(ProcessCapacityProblem(8, limits));
  CHECK_FALSE(ProcessCapacityProblem(1000, limits));
}

TEST_CASE("ProcessCapacityProblem: --nproc-per-node above a PID limit names the tightest one",
          "[launcher][process_capacity]") {
  posix::PidLimits limits;
  limits.pid_max_free = 30000;
  limits.threads_max_free = 60000;
  CHECK(ProcessCapacityProblem(100000, limits) ==
        "--nproc-per-node=100000 is more than this host can start: kernel.pid_max leaves room "
        "for 30000 more tasks; lower --nproc-per-node or raise that limit");
  limits.nproc_rlimit = 512;
  CHECK(ProcessCapacityProblem(513, limits) ==
        "--nproc-per-node=513 is more than this host can start: RLIMIT_NPROC (ulimit -u) allows "
        "this user 512 more tasks; lower --nproc-per-node or raise that limit");
  limits.cgroup_free = 100;
  limits.cgroup_dir = "/sys/fs/cgroup/job";
  CHECK(ProcessCapacityProblem(101, limits) ==
        "--nproc-per-node=101 is more than this host can start: the pids cgroup "
        "/sys/fs/cgroup/job allows 100 more tasks; lower --nproc-per-node or raise that limit");
  CHECK_FALSE(ProcessCapacityProblem(100, limits));
}

TEST_CASE("this host's PID limits are read and leave room for a few workers",
          "[launcher][process_capacity]") {
  const posix::PidLimits limits = posix::ReadPidLimits();
  REQUIRE(limits.pid_max_free);  // every Linux has kernel.pid_max
  CHECK(*limits.pid_max_free > 8);
  CHECK_FALSE(ProcessCapacityProblem(2, limits));
  CHECK(ProcessCapacityProblem(1 << 23, limits));  // above any pid_max (2^22 at most)
}

}  // namespace
}  // namespace cpplaunch
