#include "launcher/process/posix_sys.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/fd_io.h"
#include "base/small_file.h"
#include "launcher/process/posix_child.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace cpplaunch::posix {
namespace {

// ---- Helpers that run in a forked child: async-signal-safe system calls only, no allocation.

// glibc's message table: no locale, no allocation (unlike strerror and base's ErrorText).
const char* ChildErrorText(int err) {
  const char* text = ::strerrordesc_np(err);
  return text != nullptr ? text : "unknown error";
}

// Appends `text` to the fixed buffer [*pos, end), truncating.
void Append(char* buf, size_t size, size_t* pos, const char* text) {
  while (*text != '\0' && *pos + 1 < size) buf[(*pos)++] = *text++;
}

// One write() for the whole line, so that messages of children failing at once stay whole.
[[noreturn]] void ChildFail(int err_fd, const ChildPlan& plan, const char* what, int err,
                            int code) {
  char line[1024];
  size_t pos = 0;
  Append(line, sizeof(line), &pos, plan.error_prefix.c_str());
  Append(line, sizeof(line), &pos, ": ");
  if (what != nullptr) {
    Append(line, sizeof(line), &pos, what);
    Append(line, sizeof(line), &pos, ": ");
  }
  Append(line, sizeof(line), &pos, ChildErrorText(err));
  line[pos++] = '\n';
  line[pos] = '\0';
  WriteText(err_fd, line);
  ::_exit(code);
}

// Moves `fd` to a descriptor >= 3 so that installing 1 and 2 cannot clobber it.
int Lift(int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 3); }

// The soft RLIMIT_NOFILE this process was started with, once RaiseFileLimit raised it (0 = not
// raised): children get it back. Written once in main before any child exists; read in children.
rlim_t g_inherited_nofile_soft = 0;

[[noreturn]] void ChildMain(const ChildPlan& plan, pid_t parent, bool born_in_cgroup) {
  // Join the job cgroup first, so that nothing this child ever starts is outside it.
  // "0" means "the writer": the kernel moves this process, whatever its pid.
  if (!born_in_cgroup && plan.cgroup_procs_fd >= 0) (void)WriteSome(plan.cgroup_procs_fd, "0");
  // Own session and process group: the agent addresses the worker and its descendants as one
  // group, and a terminal's Ctrl-C reaches only the agent, which forwards it.
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The agent may have died before prctl took effect: then we were already reparented.
  if (::getppid() != parent) ::kill(::getpid(), SIGKILL);
  DefaultDispositions();
  UnblockAll();

  int err_fd = ::fcntl(2, F_DUPFD_CLOEXEC, 3);  // the agent's stderr, for exec errors
  if (err_fd < 0) err_fd = 2;
  int out = Lift(plan.stdout_fd);
  int err = Lift(plan.stderr_fd);
  if ((plan.stdout_fd >= 0 && (out < 0 || ::dup2(out, 1) < 0)) ||
      (plan.stderr_fd >= 0 && (err < 0 || ::dup2(err, 2) < 0))) {
    ChildFail(err_fd, plan, "installing stdout/stderr", errno, 126);
  }
  if (err_fd >= 3) {
    CloseAllExcept(&err_fd, 1);
  } else {
    CloseAllExcept(nullptr, 0);
  }
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) {
    ChildFail(err_fd, plan, "cannot change directory", errno, 126);
  }
  // The set was computed in the agent (--numa-binding); the child only hands it to the kernel.
  if (!plan.cpu_mask.empty() &&
      ::syscall(SYS_sched_setaffinity, 0, plan.cpu_mask.size() * sizeof(unsigned long),
                plan.cpu_mask.data()) != 0) {
    ChildFail(err_fd, plan, "cannot bind to the --numa-binding CPUs", errno, 126);
  }
  // Only now, with the agent's descriptors closed: with more open than the lower limit allows,
  // the dups above would fail.
  if (g_inherited_nofile_soft != 0) {
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
      limit.rlim_cur = g_inherited_nofile_soft;
      (void)::setrlimit(RLIMIT_NOFILE, &limit);
    }
  }
  // execvp's rules: try each candidate; remember EACCES; stop at an error other than "not
  // here" (ENOENT, ENOTDIR, EACCES).
  int last_error = ENOENT;
  bool saw_eacces = false;
  for (const std::string& path : plan.exec_paths) {
    ::execve(path.c_str(), plan.argv.data(), plan.envp.data());
    last_error = errno;
    if (last_error == EACCES) saw_eacces = true;
    if (last_error != ENOENT && last_error != ENOTDIR && last_error != EACCES) break;
  }
  if (saw_eacces && (last_error == ENOENT || last_error == ENOTDIR)) last_error = EACCES;
  int code = (last_error == ENOENT || last_error == ENOTDIR) ? 127 : 126;
  ChildFail(err_fd, plan, nullptr, last_error, code);
}

// Without a job cgroup to be born into (none writable, Linux < 5.7, or after cgroup.kill):
// vfork, not fork: the child borrows the agent's memory until execve instead of copying its
// page tables, which made spawning 8 workers 2-3x faster (measured: 8 x /bin/true spawned and
// reaped in 2.7 ms instead of 5-7 ms from a 10 MB process). It is safe because ChildMain only
// makes system calls, writes nothing but its own stack frames (and errno, which the suspended
// parent does not rely on), never returns, and runs with every signal blocked until it has
// reset all dispositions, so no handler of the agent can run on the shared memory.
//
// clone3 with CLONE_INTO_CGROUP: the child is born in the job cgroup, so nothing migrates it
// (a cgroup.procs write takes a global lock and waits for an RCU grace period), with a copy of
// the address space, as with fork, and the agent goes on at once. Under CPU contention this
// beats vfork, which suspends the agent until each child has been scheduled and reached exec
// (measured with 8 workers beside two busy loops: 25 ms instead of 84 ms). A clone3 with
// CLONE_VM | CLONE_VFORK on a stack of its own, which copies no page tables, was measured
// against it on a loaded 2-core machine: the first worker started no sooner and the 8 workers
// were started over twice the time (10 ms against 5 ms), since the agent waits for every child
// to be scheduled. The child only makes the async-signal-safe calls ChildMain makes, so glibc's
// fork bookkeeping is not needed. Returns -1 with errno set when the kernel or the cgroup
// refuses.
long CloneIntoCgroup(const ChildPlan& plan, pid_t parent) {
  struct clone_args args {};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<__u64>(plan.cgroup_dir_fd);
  const long pid = ::syscall(SYS_clone3, &args, sizeof(args));
  if (pid == 0) ChildMain(plan, parent, true);
  return pid;
}

}  // namespace

SpawnOutcome SpawnChild(const ChildPlan& plan) {
  const pid_t parent = ::getpid();
  SpawnOutcome outcome;
  {
    SignalBlock block;
    if (plan.cgroup_dir_fd >= 0) {
      outcome.pid = static_cast<pid_t>(CloneIntoCgroup(plan, parent));
      if (outcome.pid < 0) outcome.clone_error = errno;
      return outcome;
    }
    outcome.pid = ::vfork();  // no cgroup to be born into: vfork, and migrate there
    if (outcome.pid == 0) ChildMain(plan, parent, false);
  }
  if (outcome.pid < 0) ThrowLastError("fork");
  return outcome;
}

bool CloneIntoCgroupUnsupported(int error) {
  // ENOSYS: no clone3 (Linux < 5.3); E2BIG: clone_args larger than the kernel knows; EINVAL: no
  // CLONE_INTO_CGROUP (Linux < 5.7).
  return error == ENOSYS || error == E2BIG || error == EINVAL;
}

bool OutOfResources(int error) { return error == EAGAIN || error == ENOMEM; }

std::vector<unsigned long> CpuMask(const std::vector<int>& cpus) {
  constexpr int kBits = static_cast<int>(8 * sizeof(unsigned long));
  std::vector<unsigned long> mask;
  for (int cpu : cpus) {
    if (cpu < 0) continue;
    const auto word = static_cast<std::size_t>(cpu / kBits);
    if (mask.size() <= word) mask.resize(word + 1, 0);
    mask[word] |= 1UL << (cpu % kBits);
  }
  return mask;
}

std::vector<int> CurrentCpuAffinity() {
  // The kernel refuses a mask smaller than its own (EINVAL): grow until it fits.
  for (std::size_t cpus = 1024; cpus <= (std::size_t{1} << 20); cpus *= 2) {
    std::vector<unsigned long> mask(cpus / (8 * sizeof(unsigned long)), 0);
    const long bytes =
        ::syscall(SYS_sched_getaffinity, 0, mask.size() * sizeof(unsigned long), mask.data());
    if (bytes < 0 && errno == EINVAL) continue;
    std::vector<int> result;
    if (bytes < 0) return result;
    for (std::size_t cpu = 0; cpu < static_cast<std::size_t>(bytes) * 8; ++cpu) {
      if (mask[cpu / (8 * sizeof(unsigned long))] & (1UL << (cpu % (8 * sizeof(unsigned long)))))
        result.push_back(static_cast<int>(cpu));
    }
    return result;
  }
  return {};
}

bool OpenedPidfd::unsupported() const { return error == ENOSYS; }

OpenedPidfd PidfdOpen(pid_t pid) {
  OpenedPidfd opened;
  opened.fd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!opened.fd) opened.error = LastError();
  return opened;
}

std::optional<WorkerExit> TryReapPidfd(int pidfd) {
  siginfo_t info{};
  int rc;
  do {
    rc = ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info,
                  WEXITED | WNOHANG);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0 || info.si_pid == 0) return std::nullopt;
  if (info.si_code == CLD_EXITED) return WorkerExit::Exited(info.si_status);
  if (info.si_code == CLD_DUMPED) return WorkerExit::Dumped(info.si_status);
  return WorkerExit::Signaled(info.si_status);
}

std::optional<Reaped> TryReapAny() {
  int status = 0;
  pid_t pid;
  do {
    pid = ::waitpid(-1, &status, WNOHANG);
  } while (pid < 0 && errno == EINTR);
  if (pid <= 0) return std::nullopt;
  return Reaped{pid, WorkerExit::FromWaitStatus(status)};
}

bool KillGroup(pid_t pgid, int signo) { return pgid > 1 && ::kill(-pgid, signo) == 0; }
bool KillProcess(pid_t pid, int signo) { return pid > 1 && ::kill(pid, signo) == 0; }
bool ProcessExists(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }
bool GroupExists(pid_t pgid) { return pgid > 1 && (::kill(-pgid, 0) == 0 || errno == EPERM); }
pid_t ProcessGroupOf(pid_t pid) { return ::getpgid(pid); }

void BecomeSubreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) ThrowLastError("prctl(PR_SET_CHILD_SUBREAPER)");
}

std::vector<pid_t> ChildrenOfSelf() {
  std::vector<pid_t> children;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return children;
  while (const struct dirent* task = ::readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    const std::string text =
        ReadSmallFile(std::string("/proc/self/task/") + task->d_name + "/children").value_or("");
    for (const char* p = text.c_str(); *p != '\0';) {
      char* end = nullptr;
      const long pid = std::strtol(p, &end, 10);
      if (end == p) break;
      children.push_back(static_cast<pid_t>(pid));
      p = end;
    }
  }
  ::closedir(tasks);
  return children;
}

void AddRestartFlag(int signo) {
  struct sigaction action {};
  if (::sigaction(signo, nullptr, &action) != 0) return;
  if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) return;
  action.sa_flags |= SA_RESTART;
  ::sigaction(signo, &action, nullptr);
}

bool WaitChildExit(pid_t pid, int pidfd, int timeout_ms) {
  if (pidfd >= 0) {
    struct pollfd pfd = {pidfd, POLLIN, 0};
    int rc;
    do {
      rc = ::poll(&pfd, 1, timeout_ms);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) return false;
    TryReapPidfd(pidfd);  // ECHILD when the worker group reaped it first: fine
    return true;
  }
  // No pidfd (Linux < 5.3): a bounded sleep-and-check, used only on this shutdown path.
  for (int waited = 0; waited <= timeout_ms; ++waited) {
    pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    ::usleep(1000);
  }
  return false;
}

bool SignalChild(pid_t pid, int pidfd, int signo) {
  if (pidfd >= 0) return ::syscall(SYS_pidfd_send_signal, pidfd, signo, nullptr, 0) == 0;
  return KillProcess(pid, signo);
}

pid_t ForkHelper() {
  const pid_t parent = ::getpid();
  pid_t pid;
  {
    // No handler of the agent may run in the child before its dispositions are reset.
    SignalBlock block;
    pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      // The parent may have died before prctl took effect: then we were already reparented.
      if (::getppid() != parent) ::kill(::getpid(), SIGKILL);
      DefaultDispositions();
    }
  }
  if (pid == 0) UnblockAll();
  if (pid < 0) ThrowLastError("fork (helper)");
  return pid;
}

void ExitHelper(int code) { ::_exit(code); }

std::pair<UniqueFd, UniqueFd> CloexecPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) ThrowLastError("pipe2");
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

FileLimit CurrentFileLimit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};
  return FileLimit{limit.rlim_cur, limit.rlim_max};
}

RaisedFileLimit RaiseFileLimit() {
  RaisedFileLimit result;
  result.before = CurrentFileLimit();
  result.after = result.before;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return result;
  rlim_t target = limit.rlim_max;
  if (target == RLIM_INFINITY) {
    // The kernel refuses a soft limit above fs.nr_open.
    std::ifstream nr_open("/proc/sys/fs/nr_open");
    unsigned long long value = 0;
    if (!(nr_open >> value) || value <= limit.rlim_cur) return result;
    target = static_cast<rlim_t>(value);
  }
  const rlim_t original = limit.rlim_cur;
  limit.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return result;
  g_inherited_nofile_soft = original;
  result.after = CurrentFileLimit();
  return result;
}

namespace {

// The decimal number `text` starts with; nullopt for anything else ("max", nothing).
std::optional<uint64_t> NumberAt(const char* text) {
  if (*text < '0' || *text > '9') return std::nullopt;
  return std::strtoull(text, nullptr, 10);
}

std::optional<uint64_t> ReadNumber(const std::string& path) {
  return NumberAt(ReadSmallFile(path, 64).value_or("").c_str());
}

// The fourth field of /proc/loadavg: "running/total" scheduling entities.
std::optional<uint64_t> TasksThatExist() {
  const std::string text = ReadSmallFile("/proc/loadavg", 256).value_or("");
  const auto slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  return NumberAt(text.c_str() + slash + 1);
}

std::optional<uint64_t> FreeBelow(std::optional<uint64_t> limit, std::optional<uint64_t> used) {
  if (!limit || !used) return limit;
  return *limit > *used ? *limit - *used : 0;
}

// `relative` (from /proc/self/cgroup) under `root`, and each ancestor up to `root`.
void ReadCgroupPidsUnder(const std::filesystem::path& root, const std::string& relative,
                         PidLimits& limits) {
  std::filesystem::path dir = (root / relative.substr(1)).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // a trailing '/'
  for (;; dir = dir.parent_path()) {
    auto max = ReadNumber((dir / "pids.max").string());  // "max" does not parse: no limit
    auto current = ReadNumber((dir / "pids.current").string());
    if (max && current) {
      const uint64_t free = *max > *current ? *max - *current : 0;
      if (!limits.cgroup_free || free < *limits.cgroup_free) {
        limits.cgroup_free = free;
        limits.cgroup_dir = dir.string();
      }
    }
    if (dir == root || dir == dir.parent_path()) break;
  }
}

// The agent's cgroup and each ancestor may set pids.max; the tightest one counts. cgroup v2
// ("0::/path" under /sys/fs/cgroup) or the v1 pids controller ("N:pids:/path" under
// /sys/fs/cgroup/pids); a v2 hierarchy without the pids controller has no pids.max files.
void ReadCgroupPids(PidLimits& limits) {
  std::istringstream self(ReadSmallFile("/proc/self/cgroup").value_or(""));
  std::string line;
  while (std::getline(self, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string relative = line.substr(second + 1);
    if (relative.empty() || relative[0] != '/') continue;
    if (controllers.empty()) {
      ReadCgroupPidsUnder("/sys/fs/cgroup", relative, limits);
    } else if (controllers == "pids") {
      ReadCgroupPidsUnder("/sys/fs/cgroup/pids", relative, limits);
    }
  }
}

}  // namespace

PidLimits ReadPidLimits() {
  PidLimits limits;
  struct rlimit nproc {};
  // Root (CAP_SYS_RESOURCE) is not held to RLIMIT_NPROC.
  if (::geteuid() != 0 && ::getrlimit(RLIMIT_NPROC, &nproc) == 0 &&
      nproc.rlim_cur != RLIM_INFINITY) {
    limits.nproc_rlimit = nproc.rlim_cur;
  }
  const auto tasks = TasksThatExist();
  limits.pid_max_free = FreeBelow(ReadNumber("/proc/sys/kernel/pid_max"), tasks);
  limits.threads_max_free = FreeBelow(ReadNumber("/proc/sys/kernel/threads-max"), tasks);
  ReadCgroupPids(limits);
  return limits;
}

bool WriteFile(const std::string& path, const std::string& text) {
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  // A cgroup control file takes or refuses the whole write at once (e.g. EBUSY, EACCES).
  return fd && WriteSome(fd.get(), text).ok();
}

bool IsCgroup2Mount(const std::string& path) {
  struct statfs fs {};
  // statfs of a directory inside a file system names that file system too: the caller passes
  // the mount points it expects, whose parents are other file systems (sysfs, tmpfs).
  return ::statfs(path.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

}  // namespace cpplaunch::posix
