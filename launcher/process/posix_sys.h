#pragma once
// The launcher's system calls for processes: fork/exec, pidfd, wait, kill, prctl, close_range
// (the sentinel's body and its socket are in sentinel_process.h, the calls a forked child may
// make in posix_child.h). Nothing else in launcher/ forks, waits, kills or reads errno for
// processes. Thin, stateless wrappers; the policy lives in the callers.
//
// Descriptors this layer creates are returned as UniqueFd (base/unique_fd.h); descriptors it is
// given are borrowed. Errors: functions documented as throwing raise std::system_error
// (base/fd_io.h's ThrowLastError, "<call>: <errno text>"); the others return a value the caller
// must inspect. Callers never read errno.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "launcher/process/worker_exit.h"

namespace cpplaunch::posix {

// Everything the child needs between fork and exec, prepared in the parent so that the child
// allocates nothing (only async-signal-safe calls run after fork).
struct ChildPlan {
  std::vector<std::string> exec_paths;  // candidates tried in order, as execvp does
  std::vector<char*> argv;              // null-terminated
  std::vector<char*> envp;              // null-terminated
  const char* cwd = nullptr;            // null = keep the agent's
  int stdout_fd = -1;                   // -1 = inherit
  int stderr_fd = -1;
  int cgroup_procs_fd = -1;  // -1 = no cgroup to join
  // The job cgroup's directory (O_PATH). When set, the child is born inside the cgroup by
  // clone3(CLONE_INTO_CGROUP) instead of being vforked and migrating there through
  // cgroup_procs_fd: no migration, and the agent is not suspended until each child execs.
  int cgroup_dir_fd = -1;
  // sched_setaffinity's mask (bits by CPU number), applied before exec; empty = inherit.
  std::vector<unsigned long> cpu_mask;
  std::string error_prefix;  // "cpplaunch: cannot execute 'prog' (local rank 3)"
};

// Creates a child which calls setsid(), sets PR_SET_PDEATHSIG(SIGKILL), resets signal
// dispositions and mask, installs fds 1/2, binds to plan.cpu_mask, closes every fd >= 3 and
// execs. On failure the child writes "<error_prefix>: <errno text>" to the agent's stderr and
// exits 127 (not found) or 126.
// With plan.cgroup_dir_fd, the child is born inside that cgroup (clone3, CLONE_INTO_CGROUP);
// when the kernel or the cgroup refuses, nothing is created: pid is -1 and clone_error says why
// (see CloneIntoCgroupUnsupported, OutOfResources), and the caller chooses another way. Without
// it, the child is vforked and joins plan.cgroup_procs_fd's cgroup itself; throws if that fails.
struct SpawnOutcome {
  pid_t pid = -1;
  int clone_error = 0;
};
SpawnOutcome SpawnChild(const ChildPlan& plan);
// The kernel lacks clone3 or CLONE_INTO_CGROUP (Linux < 5.7): another error means the cgroup
// refuses newcomers (permissions, delegation).
bool CloneIntoCgroupUnsupported(int error);
// EAGAIN or ENOMEM: the system is out of processes or memory, not a property of the cgroup.
bool OutOfResources(int error);

// The CPU set as the mask ChildPlan::cpu_mask holds. Pure.
std::vector<unsigned long> CpuMask(const std::vector<int>& cpus);
// The CPUs this thread may run on (sched_getaffinity); empty if it cannot be read.
std::vector<int> CurrentCpuAffinity();

// pidfd_open(2) via syscall. On failure `fd` is empty and `error` holds the errno value:
// ENOSYS when the kernel has no pidfds (Linux < 5.3; unsupported()), ESRCH when the pid is gone.
struct OpenedPidfd {
  UniqueFd fd;
  int error = 0;
  bool unsupported() const;
};
OpenedPidfd PidfdOpen(pid_t pid);

// Reaps the child behind `pidfd` if it has exited (waitid(P_PIDFD, WNOHANG)). nullopt when it
// is still running or was already reaped elsewhere (ECHILD).
std::optional<WorkerExit> TryReapPidfd(int pidfd);

struct Reaped {
  pid_t pid;
  WorkerExit exit;
};
// Reaps any one exited child (waitpid(-1, WNOHANG)); nullopt when none is waiting.
std::optional<Reaped> TryReapAny();

// kill(-pgid, signo) and kill(pid, signo); false when no such process (group) exists.
bool KillGroup(pid_t pgid, int signo);
bool KillProcess(pid_t pid, int signo);
// True when process `pid` exists (kill(pid, 0)).
bool ProcessExists(pid_t pid);
// True when some process is in process group `pgid` (kill(-pgid, 0)).
bool GroupExists(pid_t pgid);
// getpgid(pid); -1 when the process is gone.
pid_t ProcessGroupOf(pid_t pid);

// PR_SET_CHILD_SUBREAPER: orphaned descendants are reparented to this process. Throws.
void BecomeSubreaper();

// Current children of this process (all threads), from /proc/self/task/*/children. Empty when
// the kernel lacks CONFIG_PROC_CHILDREN.
std::vector<pid_t> ChildrenOfSelf();

// Re-installs the current handler of `signo` with SA_RESTART added (boost::asio's signal_set
// installs its handler without it, which would make unrelated blocking calls fail with EINTR).
void AddRestartFlag(int signo);

// Waits up to `timeout_ms` for the child `pid` to exit, then reaps it if it is still ours.
// With a pidfd (>= 0) the wait and the reaping address exactly that process even if someone
// else reaped it and its pid was reused; without one (-1) the pid is used.
// Returns true when it exited (or was already reaped elsewhere).
bool WaitChildExit(pid_t pid, int pidfd, int timeout_ms);
// Sends `signo` through the pidfd when there is one (never hits a reused pid), else by pid.
bool SignalChild(pid_t pid, int pidfd, int signo);

// --- Helper children (bounded_child.h) -------------------------------------------------------

// Forks a child that goes on running the caller's code (no exec): returns 0 in the child and
// the child's pid in the parent. The child gets PR_SET_PDEATHSIG(SIGKILL) (it dies with the
// agent), default signal dispositions and an empty signal mask. Throws if fork fails.
// Call only while this process has one thread: the child then may allocate and load libraries.
pid_t ForkHelper();
// _exit(code): ends a helper child without running the parent's atexit handlers or flushing
// the stdio buffers it inherited.
[[noreturn]] void ExitHelper(int code);
// pipe2(O_CLOEXEC): {read end, write end}. Throws.
std::pair<UniqueFd, UniqueFd> CloexecPipe();

// --- Descriptor limit ------------------------------------------------------------------------

// RLIMIT_NOFILE of this process.
struct FileLimit {
  uint64_t soft = 0;
  uint64_t hard = 0;
};
FileLimit CurrentFileLimit();
// Raises the soft RLIMIT_NOFILE to the hard limit (to fs.nr_open when the hard limit is
// unlimited), so the agent's store can hold many connections beside its workers' log files and
// pipes, and remembers the soft limit the process was started with: every child spawned
// afterwards gets it back before exec, as under torchrun, which never changes the limit (a
// worker using select() needs fds below 1024). Returns the limit before and after. Never throws:
// a refused raise leaves the limit as it was. Call once, early in main.
struct RaisedFileLimit {
  FileLimit before;
  FileLimit after;
};
RaisedFileLimit RaiseFileLimit();

// --- PID limits ------------------------------------------------------------------------------

// How many more tasks (processes and threads) this host lets the agent start, by each limit
// that applies; nullopt where a limit does not apply or cannot be read. Never throws.
struct PidLimits {
  std::optional<uint64_t> nproc_rlimit;      // soft RLIMIT_NPROC; nullopt for root or unlimited
  std::optional<uint64_t> pid_max_free;      // kernel.pid_max minus the tasks that exist
  std::optional<uint64_t> threads_max_free;  // kernel.threads-max minus the tasks that exist
  std::optional<uint64_t> cgroup_free;       // the tightest pids.max - pids.current up the tree
  std::string cgroup_dir;                    // where cgroup_free was found
};
PidLimits ReadPidLimits();

// Writes `text` to the existing file `path` (cgroup control files); false on any failure.
bool WriteFile(const std::string& path, const std::string& text);

// Whether `path` is the root of a mounted cgroup2 file system (one statfs).
bool IsCgroup2Mount(const std::string& path);

}  // namespace cpplaunch::posix
