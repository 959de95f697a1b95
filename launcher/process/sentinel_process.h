#pragma once
// The sentinel's process (see job_sentinel.h for why it exists): its body, which runs in a
// forked child and never execs, and the SOCK_SEQPACKET protocol between it and the agent. The
// policy (where the job cgroup goes, when to watch a group) lives in JobSentinel.

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>

#include "base/unique_fd.h"

namespace cpplaunch::posix {

// One message from the agent to the sentinel.
struct SentinelMessage {
  char op;      // kSentinelWatch, kSentinelForget, kSentinelQuit
  pid_t value;  // a process group id
};
constexpr char kSentinelWatch = 'W';
constexpr char kSentinelForget = 'F';
constexpr char kSentinelQuit = 'Q';

// A job cgroup and its control files, opened close-on-exec.
struct JobCgroupFiles {
  std::string dir;  // its path
  UniqueFd kill;    // cgroup.kill, for writing: one write kills every process inside
  UniqueFd events;  // cgroup.events: the sentinel waits on it for the cgroup to empty
  UniqueFd procs;   // cgroup.procs, for writing: a vforked child joins by writing "0"
  UniqueFd dir_fd;  // the directory (O_PATH), for clone3(CLONE_INTO_CGROUP); may be empty
};

struct SentinelPlan {
  int socket_fd = -1;  // the sentinel's end of the pair; every other descriptor is closed in it
  pid_t agent_pid = 0;
  // Null: no job cgroup to make. Else called once in the sentinel, first thing, to make the job
  // cgroup of `agent_pid`; nullopt when it cannot. It may allocate and throw: the agent had one
  // thread when it forked.
  std::optional<JobCgroupFiles> (*make_cgroup)(pid_t agent_pid) = nullptr;
  // Or the job cgroup the agent made itself before the fork (AnotherCpuAllowed() false): the
  // sentinel keeps its copies of `kill` and `events` and sends no report.
  const JobCgroupFiles* cgroup = nullptr;
};

// Whether this process may run on more than one CPU (sched_getaffinity), so that a sentinel
// moved to another one makes the job cgroup beside the agent instead of after it.
bool AnotherCpuAllowed();

// Forks the sentinel. With plan.make_cgroup it first makes the job cgroup, moved to another core
// the agent may use (when there is one) so that the agent goes on preparing the job meanwhile,
// and sends it to the agent (ReceiveSentinelCgroup); it then takes back the agent's CPU set.
// It then runs until its socket reads EOF (the agent died) or kSentinelQuit, kills every watched
// process group and the cgroup's processes, removes the cgroup and exits. Throws if fork fails.
pid_t SpawnSentinel(const SentinelPlan& plan);

// The agent's side of the sentinel's one report: waits up to `timeout_ms` and returns the job
// cgroup (without `events`, which only the sentinel keeps); nullopt when the sentinel made none,
// is gone, or did not answer in time. Call only when plan.make_cgroup was set, and once.
std::optional<JobCgroupFiles> ReceiveSentinelCgroup(int fd, int timeout_ms);

// socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC): two connected ends. Throws.
std::pair<UniqueFd, UniqueFd> SeqpacketPair();
// Sends one message without blocking and without SIGPIPE; false if the peer is gone or full.
bool SendSentinelMessage(int fd, const SentinelMessage& message);

}  // namespace cpplaunch::posix
