#pragma once
// The agent's reading of /proc and cgroup files about its workers: the thin shell around the
// pure parsers (proc_stat.h, memory_cgroup.h). Files are read whole (base/small_file.h); a
// process that is gone, or a file the kernel lacks, reads as nullopt / empty. Never throws.
// Threads: any; the agent calls these on its loop thread (each is a few small reads).

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/small_file.h"  // ReadSmallFile, which every reader here uses
#include "launcher/diagnosis/proc_stat.h"

namespace cpplaunch {

std::optional<ProcStat> ReadProcStat(pid_t pid);
// /proc/<pid>/wchan: the kernel function a sleeping process waits in; "" when unknown.
std::string ReadWchan(pid_t pid);
// The children of `pid` (every thread's), from /proc/<pid>/task/*/children.
std::vector<pid_t> ChildrenOf(pid_t pid);

// CPU time, in clock ticks, of `root` and every descendant it has now (threads included),
// plus what its reaped children used. nullopt when `root` is gone. Bounded: at most
// `max_processes` processes are visited.
std::optional<std::uint64_t> TreeCpuTicks(pid_t root, std::size_t max_processes = 4096);

}  // namespace cpplaunch
