#pragma once
// A worker's end in plain words, beyond its exit code: killed by the kernel's OOM killer, by a
// signal from outside the job, a crash with or without a core dump, a program that could not
// be run (126/127), a process stuck in uninterruptible sleep at teardown. Pure: the facts come
// from the agent (oom_watch.h, proc_reader.h); these functions only choose the words.

#include <cstdint>
#include <optional>
#include <string>

#include "launcher/process/worker_exit.h"

namespace cpplaunch {

// The OOM killer's counter of the worker's memory cgroup moved for this death.
struct OomKill {
  std::optional<std::uint64_t> limit_bytes;  // nullopt: no limit set (the machine ran out)
  std::optional<std::uint64_t> peak_bytes;   // nullopt: the kernel does not say
};

// What the agent finds for the program when a worker exited 126 or 127, the codes a failed
// exec gives (as a shell's).
enum class ProgramCheck {
  kNotFound,       // no candidate exists (not on PATH, or no such file)
  kNotExecutable,  // it exists but no execute bit is set (or it is a directory)
  kRunnable,       // it exists and is executable: the code came from elsewhere
};

struct ExitFacts {
  WorkerExit exit = WorkerExit::Exited(0);
  bool sent_by_cpplaunch = false;  // the teardown's (or a forwarded) signal killed it
  // For a SIGKILL cpplaunch did not send: whether an OOM-kill counter could be read at all,
  // and the kill it showed, if any.
  bool oom_counter_read = false;
  std::optional<OomKill> oom;
  std::string program;                        // argv[0] of the worker, as given
  std::optional<ProgramCheck> program_check;  // set for exit codes 126 and 127
};

// One phrase for the failure summary ("killed by the kernel's OOM killer (memory limit
// 64.0 MiB, peak 63.9 MiB)"), or "" when the exit code says it all (an ordinary exit code, a
// signal cpplaunch sent).
std::string ExplainExit(const ExitFacts& facts);

// True for the signals a process raises on itself when it crashes (SIGSEGV, SIGABRT, ...).
bool IsCrashSignal(int signo);

// A worker that survived SIGKILL at teardown: "worker local rank 2 (pid 4242) is in
// uninterruptible sleep (D state) in the kernel at nfs_wait_on_request and did not die after
// SIGKILL; abandoning it". `state` is /proc/<pid>/stat's state letter ('\0' = unknown), `wchan`
// the kernel function it waits in ("" = unknown).
std::string DescribeUnkillable(int local_rank, int pid, char state, const std::string& wchan);

}  // namespace cpplaunch
