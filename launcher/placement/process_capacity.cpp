#include "launcher/placement/process_capacity.h"

#include <cstdint>
#include <vector>

namespace cpplaunch {

std::optional<std::string> ProcessCapacityProblem(int nproc, const posix::PidLimits& limits) {
  struct Limit {
    std::optional<uint64_t> free;
    std::string what;
  };
  const std::vector<Limit> all{
      {limits.cgroup_free, "the pids cgroup " + limits.cgroup_dir + " allows"},
      {limits.nproc_rlimit, "RLIMIT_NPROC (ulimit -u) allows this user"},
      {limits.threads_max_free, "kernel.threads-max leaves room for"},
      {limits.pid_max_free, "kernel.pid_max leaves room for"},
  };
  const Limit* tightest = nullptr;
  for (const Limit& limit : all) {
    if (limit.free && (!tightest || *limit.free < *tightest->free)) tightest = &limit;
  }
  if (nproc <= 0 || !tightest || static_cast<uint64_t>(nproc) <= *tightest->free) {
    return std::nullopt;
  }
  return "--nproc-per-node=" + std::to_string(nproc) +
         " is more than this host can start: " + tightest->what + " " +
         std::to_string(*tightest->free) +
         " more tasks; lower --nproc-per-node or raise that limit";
}

}  // namespace cpplaunch
