#include "launcher/process/sentinel_process.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/fd_io.h"
#include "launcher/process/posix_child.h"

namespace cpplaunch::posix {
namespace {

constexpr int kMaxWatched = 8192;

// The sentinel's report to the agent: one byte ('C': a cgroup follows, 'N': none), the cgroup's
// path, and its cgroup.kill, cgroup.procs and (when opened) O_PATH descriptors, in that order,
// as SCM_RIGHTS.
constexpr int kMaxReportFds = 3;

long MonotonicMs() {
  struct timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

bool CgroupPopulated(int events_fd) {
  char buf[256];
  ssize_t n = ::pread(events_fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  return std::strstr(buf, "populated 1") != nullptr;
}

// Waits (bounded) until the cgroup is empty; cgroup.events signals POLLPRI on every change.
void WaitCgroupEmpty(int events_fd, long timeout_ms) {
  long deadline = MonotonicMs() + timeout_ms;
  while (CgroupPopulated(events_fd)) {
    long left = deadline - MonotonicMs();
    if (left <= 0) return;
    struct pollfd pfd = {events_fd, POLLPRI, 0};
    ::poll(&pfd, 1, static_cast<int>(std::min(left, 50L)));
  }
}

void SentinelSetup(const SentinelPlan& plan, const JobCgroupFiles& cgroup) {
  ::setsid();  // out of the agent's session: terminal signals and hangups do not reach it
  ::prctl(PR_SET_NAME, "cpplaunch-sentinel");  // ps shows "cpplaunch-senti" (15 characters)
  DefaultDispositions();
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int signo :
       {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
    ::sigaction(signo, &ignore, nullptr);
  }
  UnblockAll();  // only now: a signal sent to the agent's pid just before the fork is harmless
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);  // never hold the agent's stdout pipe open
  }
  int keep[3];
  int count = 0;
  for (int fd : {plan.socket_fd, cgroup.kill.get(), cgroup.events.get()}) {
    if (fd >= 3) keep[count++] = fd;
  }
  std::sort(keep, keep + count);  // CloseAllExcept wants ascending order
  CloseAllExcept(keep, count);
}

// Blocking is fine: the report is the first message on a fresh pair. A peer that is gone
// (EPIPE) is not an error here: the loop then reads EOF and cleans up.
void SendCgroupReport(int fd, const JobCgroupFiles* cgroup) {
  std::string payload = cgroup != nullptr ? "C" + cgroup->dir : "N";
  int fds[kMaxReportFds];
  int count = 0;
  if (cgroup != nullptr) {
    fds[count++] = cgroup->kill.get();
    fds[count++] = cgroup->procs.get();
    if (cgroup->dir_fd) fds[count++] = cgroup->dir_fd.get();
  }
  struct iovec iov {
    payload.data(), payload.size()
  };
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxReportFds)] = {};
  struct msghdr message {};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  if (count > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
    struct cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * count);
    std::memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
  }
  ssize_t n;
  do {
    n = ::sendmsg(fd, &message, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
}

// The job cgroup the sentinel looks after: the agent's (the fork copied its descriptors), or
// made and reported here when the plan asks for one; empty otherwise. The agent holds
// cgroup.procs and the directory; the sentinel keeps only what its end needs (SentinelSetup
// closes the rest).
JobCgroupFiles SentinelCgroup(const SentinelPlan& plan) {
  JobCgroupFiles cgroup;
  if (plan.cgroup != nullptr) {
    cgroup.dir = plan.cgroup->dir;
    cgroup.kill.reset(plan.cgroup->kill.get());
    cgroup.events.reset(plan.cgroup->events.get());
    return cgroup;
  }
  if (plan.make_cgroup == nullptr) return cgroup;
  std::optional<JobCgroupFiles> made;
  try {
    made = plan.make_cgroup(plan.agent_pid);
  } catch (const std::exception&) {
    made.reset();  // no cgroup: the job runs with process groups only
  }
  SendCgroupReport(plan.socket_fd, made ? &*made : nullptr);
  if (!made) return cgroup;
  cgroup = std::move(*made);
  cgroup.procs.reset();
  cgroup.dir_fd.reset();
  return cgroup;
}

// `affinity`: the agent's CPU set, taken back once the cgroup is reported (see MoveToAnotherCore).
// The cgroup comes first, while every signal is still blocked, because the agent waits for it.
[[noreturn]] void SentinelMain(const SentinelPlan& plan, const cpu_set_t* affinity) {
  const JobCgroupFiles cgroup = SentinelCgroup(plan);
  if (affinity != nullptr) (void)::sched_setaffinity(0, sizeof(*affinity), affinity);
  SentinelSetup(plan, cgroup);
  static pid_t watched[kMaxWatched];
  int count = 0;
  bool clean = false;
  for (;;) {
    SentinelMessage message{};
    // SOCK_SEQPACKET keeps message boundaries: one recv is one whole message (or EOF).
    const IoResult r = RecvSome(plan.socket_fd, reinterpret_cast<char*>(&message), sizeof(message));
    // An agent that quits before taking the cgroup report closes its end with the report unread:
    // the kernel then fails the next recv with ECONNRESET ahead of the Quit still queued.
    if (r.status == IoResult::Status::kError && r.error == ECONNRESET) continue;
    if (!r.ok()) break;  // EOF: the agent is gone (the kernel closed its end, however it died)
    if (r.bytes != sizeof(message)) continue;
    if (message.op == kSentinelQuit) {
      clean = true;
      break;
    }
    if (message.op == kSentinelWatch && count < kMaxWatched) watched[count++] = message.value;
    if (message.op == kSentinelForget) {
      for (int i = 0; i < count; ++i) {
        if (watched[i] == message.value) watched[i] = watched[--count];
      }
    }
  }
  int killed = 0;
  for (int i = 0; i < count; ++i) {
    bool group = ::kill(-watched[i], SIGKILL) == 0;
    bool leader = ::kill(watched[i], SIGKILL) == 0;
    if (group || leader) ++killed;
  }
  if (cgroup.kill) (void)WriteSome(cgroup.kill.get(), "1");
  if (!clean) {
    char a[12], b[12];
    WriteText(2, "cpplaunch: agent (pid ");
    WriteText(2, FormatNumber(plan.agent_pid, a));
    WriteText(2, ") died; its sentinel killed ");
    WriteText(2, FormatNumber(killed, b));
    WriteText(2, " worker process group(s) and the job cgroup\n");
  }
  if (!cgroup.dir.empty()) {
    if (cgroup.events) WaitCgroupEmpty(cgroup.events.get(), 2000);
    ::rmdir(cgroup.dir.c_str());
  }
  ::_exit(0);
}

// A forked child is often queued on its parent's core and runs only once the parent sleeps: the
// agent then reached its first worker and waited 300 to 590 us for the cgroup, in 4 of 8 timed
// launches here. Moved at once to another core it may use, the sentinel makes the cgroup beside
// the agent (paired launches of one worker: 0.95 to 0.96 of the time with the agent making the
// cgroup itself); it takes back the agent's whole set once it has reported.
void MoveToAnotherCore(pid_t pid, const cpu_set_t& allowed) {
  const int here = ::sched_getcpu();
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (cpu == here || !CPU_ISSET(cpu, &allowed)) continue;
    cpu_set_t other;
    CPU_ZERO(&other);
    CPU_SET(cpu, &other);
    (void)::sched_setaffinity(pid, sizeof(other), &other);
    return;
  }
}

}  // namespace

bool AnotherCpuAllowed() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  return ::sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 1;
}

pid_t SpawnSentinel(const SentinelPlan& plan) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const bool affinity = ::sched_getaffinity(0, sizeof(allowed), &allowed) == 0;
  pid_t pid;
  {
    SignalBlock block;
    pid = ::fork();
    if (pid == 0) SentinelMain(plan, affinity ? &allowed : nullptr);
  }
  if (pid < 0) ThrowLastError("fork (sentinel)");
  if (plan.make_cgroup != nullptr && affinity) MoveToAnotherCore(pid, allowed);
  return pid;
}

std::optional<JobCgroupFiles> ReceiveSentinelCgroup(int fd, int timeout_ms) {
  struct pollfd ready = {fd, POLLIN, 0};
  int polled;
  do {
    polled = ::poll(&ready, 1, timeout_ms);
  } while (polled < 0 && errno == EINTR);
  if (polled <= 0) return std::nullopt;
  char payload[PATH_MAX + 1];
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxReportFds)];
  struct iovec iov {
    payload, sizeof(payload)
  };
  struct msghdr message {};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(fd, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return std::nullopt;
  UniqueFd received[kMaxReportFds];
  int count = 0;
  for (struct cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const size_t fds = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < fds; ++i) {
      int value;
      std::memcpy(&value, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
      UniqueFd owned(value);  // closed unless kept below
      if (count < kMaxReportFds) received[count++] = std::move(owned);
    }
  }
  if ((message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || payload[0] != 'C' || count < 2) {
    return std::nullopt;
  }
  JobCgroupFiles cgroup;
  cgroup.dir.assign(payload + 1, static_cast<size_t>(n - 1));
  cgroup.kill = std::move(received[0]);
  cgroup.procs = std::move(received[1]);
  cgroup.dir_fd = std::move(received[2]);
  return cgroup;
}

std::pair<UniqueFd, UniqueFd> SeqpacketPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    ThrowLastError("socketpair");
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// MSG_DONTWAIT: the agent never blocks on a sentinel that stopped reading (stopped by a
// debugger, say); the caller is told and containment rests on the other layers.
bool SendSentinelMessage(int fd, const SentinelMessage& message) {
  ssize_t n;
  do {
    n = ::send(fd, &message, sizeof(message), MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(message));
}

}  // namespace cpplaunch::posix
