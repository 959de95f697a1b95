#pragma once
// JobSentinel: makes sure nothing started by the job outlives the agent, even when the agent
// is killed with SIGKILL and cannot clean up.
//
// Mechanism (chosen for robustness without privileges, strengthened when the kernel allows):
//   1. A tiny sentinel process is forked at agent start, before any worker. It keeps one end of
//      a SOCK_SEQPACKET socket pair, closes every other descriptor (so it never holds the
//      store's port or a worker pipe), leaves the agent's session and ignores terminal signals.
//      The agent tells it each worker's process group (Watch) and retires them after a clean
//      stop (Forget). When the agent dies, the kernel closes the agent's end; the sentinel reads
//      EOF at once and SIGKILLs every watched process group (and each leader pid), then the
//      job cgroup. It does not exec: it runs the agent's code once, to create the job cgroup
//      (so Start() must run while the agent has one thread), then async-signal-safe calls only.
//   2. When a cgroup v2 hierarchy is mounted and writable (root, or a delegated subtree) and
//      has cgroup.kill (Linux >= 5.14), a job cgroup "cpplaunch-<agentpid>-<n>" is created
//      below the agent's own cgroup and every worker is born in it (or joins it before exec).
//      The sentinel creates it as soon as it is forked and hands the agent its control files,
//      so that this runs on another core while the agent prepares the job (the agent creates
//      it itself when it may use only one CPU).
//      Descendants cannot leave a cgroup by setsid() or double forking, so cgroup.kill reaches
//      even daemonized grandchildren, which process groups do not. Whether a process may be
//      put there is learnt from the first worker's birth (or, without clone3, probed once by
//      moving the sentinel in and back out); on any failure the job runs with process groups
//      only (weaker: a descendant that calls setsid() escapes an agent SIGKILL,
//      though a living agent still kills it through its subreaper adoption).
//   3. Workers also get PR_SET_PDEATHSIG(SIGKILL) (see posix_worker_group.h), which covers the
//      worker itself even if the sentinel was killed too.
// Why not cgroups alone: they are often not writable (non-root without delegation, cgroup v1);
// why not process groups alone: grandchildren that daemonize escape them.
//
// Threads: not thread-safe; use from the agent's loop thread. No method blocks except Start()
// (one fork), the first one that needs the job cgroup (it waits for the sentinel's report, up to
// 2 s; well under a millisecond normally, and already there when the first worker starts) and
// the destructor (waits up to 4 s for the sentinel).

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "launcher/process/sentinel_process.h"

namespace cpplaunch {

struct JobSentinelOptions {
  bool use_cgroup = true;  // false: process groups only (tests of the fallback)
};

class JobSentinel {
 public:
  // Forks the sentinel, which creates the job cgroup if possible. Call early in main, before
  // other threads exist (the sentinel runs the agent's code to create the cgroup). Throws
  // std::system_error if the socket pair or the fork fails.
  static std::unique_ptr<JobSentinel> Start(JobSentinelOptions options = {});

  // Clean shutdown: Quit() if not done yet, then reaps the sentinel, waiting up to 3 s, then
  // SIGKILLs it and waits up to 1 s more.
  ~JobSentinel();

  // The job is over (its workers are gone, or abandoned in uninterruptible sleep): the sentinel
  // SIGKILLs what is still watched (normally nothing: stopped workers are forgotten) and what is
  // left in the job cgroup, removes the cgroup and exits, without the message of an agent's
  // death. Never blocks, so the sentinel's exit overlaps the agent's own last steps; the
  // destructor then only reaps it. Watch and Forget return false afterwards. Idempotent.
  void Quit();
  JobSentinel(const JobSentinel&) = delete;
  JobSentinel& operator=(const JobSentinel&) = delete;

  // Registers / retires a worker's process group (its pid, since the worker called setsid()).
  // Never blocks; returns false if the sentinel is gone (it was killed): containment then
  // rests on PDEATHSIG, the cgroup and a living agent.
  bool Watch(pid_t pgid);
  bool Forget(pid_t pgid);

  // Called when clone3(CLONE_INTO_CGROUP) into cgroup_dir_fd() refused a worker with `error`
  // (posix::SpawnOutcome::clone_error): cgroup_dir_fd() becomes -1 and, depending on why, later
  // workers migrate into the cgroup (cgroup_procs_fd()) or the job runs with process groups
  // only (has_cgroup() false).
  void CloneIntoCgroupRefused(int error);

  // SIGKILLs every process in the job cgroup (cgroup.kill). No-op without a cgroup. Later
  // children join the cgroup by migration (cgroup_dir_fd() becomes -1).
  void KillCgroup();

  // Write end of the job cgroup's cgroup.procs (close-on-exec) for children to join it by
  // writing "0"; -1 without a cgroup.
  int cgroup_procs_fd() {
    AwaitCgroup();
    return procs_fd_.get();
  }
  // The job cgroup's directory (O_PATH, close-on-exec) when children can be born inside it
  // with clone3(CLONE_INTO_CGROUP) (Linux >= 5.7); -1 otherwise (join by cgroup_procs_fd).
  int cgroup_dir_fd() {
    AwaitCgroup();
    return dir_fd_.get();
  }
  bool has_cgroup() {
    AwaitCgroup();
    return procs_fd_.valid();
  }
  const std::string& cgroup_path() {  // empty without a cgroup
    AwaitCgroup();
    return cgroup_path_;
  }
  pid_t pid() const { return pid_; }

 private:
  JobSentinel() = default;
  bool Send(char op, pid_t value);
  void AwaitCgroup();                             // takes the sentinel's report once, if one is due
  void TakeCgroup(posix::JobCgroupFiles cgroup);  // the job cgroup's files, from either side
  bool ProbeMigration();  // moves the sentinel in and out; false: stuck inside
  void DropCgroup();      // stops using the job cgroup (process groups only)

  bool cgroup_pending_ = false;  // the sentinel's report is due and not taken yet
  pid_t pid_ = -1;
  UniqueFd pidfd_;      // the sentinel's pidfd: its pid may be reused once someone reaps it
  UniqueFd socket_fd_;  // the agent's end
  UniqueFd procs_fd_;
  UniqueFd dir_fd_;
  UniqueFd kill_fd_;
  std::string cgroup_path_;
};

}  // namespace cpplaunch
