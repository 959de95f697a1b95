#pragma once
// Whether this host can start the workers --nproc-per-node asks for, judged against its PID
// limits (posix::ReadPidLimits) before any worker starts: 100,000 workers would exhaust the
// host's PIDs, starve every other process and fail half-way through the spawn. Pure.

#include <optional>
#include <string>

#include "launcher/process/posix_sys.h"

namespace cpplaunch {

// nullopt when `nproc` workers (one task each, at least) fit under every limit; otherwise one
// line naming the tightest limit and what to do:
//   "--nproc-per-node=100000 is more than this host can start: the pids cgroup
//    /sys/fs/cgroup/x allows 4000 more tasks (pids.max); lower --nproc-per-node or raise the
//    limit"
std::optional<std::string> ProcessCapacityProblem(int nproc, const posix::PidLimits& limits);

}  // namespace cpplaunch
