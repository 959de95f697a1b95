#include "launcher/process/posix_worker_group.h"

#include <signal.h>

#include <algorithm>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include "base/executable_search.h"
#include "launcher/process/job_sentinel.h"
#include "launcher/process/posix_sys.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;

// PATH as execvp would see it, except that the worker's own environment wins: that is what
// Python's subprocess (and so torchrun) does when it is given an env.
const char* SearchPath(const std::vector<std::string>& env) {
  for (const std::string& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) return entry.c_str() + 5;
  }
  return std::getenv("PATH");
}

// Owns the strings the child's argv/envp pointers point into.
struct PreparedChild {
  ProcessSpec spec;
  posix::ChildPlan plan;
};

std::unique_ptr<PreparedChild> Prepare(ProcessSpec spec, int cgroup_procs_fd, int cgroup_dir_fd) {
  if (spec.argv.empty()) throw std::invalid_argument("ProcessSpec has an empty argv");
  auto child = std::make_unique<PreparedChild>();
  child->spec = std::move(spec);
  ProcessSpec& s = child->spec;
  posix::ChildPlan& plan = child->plan;
  plan.exec_paths = ExecCandidates(s.argv[0], SearchPath(s.env));
  for (std::string& arg : s.argv) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  for (std::string& entry : s.env) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  plan.cwd = s.cwd ? s.cwd->c_str() : nullptr;
  plan.stdout_fd = s.stdout_fd;
  plan.stderr_fd = s.stderr_fd;
  plan.cgroup_procs_fd = cgroup_procs_fd;
  plan.cgroup_dir_fd = cgroup_dir_fd;
  plan.cpu_mask = posix::CpuMask(s.cpus);
  plan.error_prefix =
      "cpplaunch: cannot execute '" + s.argv[0] + "' (local rank " + std::to_string(s.id) + ")";
  return child;
}

std::set<pid_t> ForeignChildren() {
  std::vector<pid_t> children = posix::ChildrenOfSelf();
  return std::set<pid_t>(children.begin(), children.end());
}

class PosixWorkerGroup final : public WorkerGroup {
 public:
  PosixWorkerGroup(asio::io_context& io, PosixWorkerGroupOptions options)
      : io_(io),
        options_(options),
        sigchld_(io, SIGCHLD),
        grace_timer_(io),
        // Children the process had before the group existed are not the job's: a shell's
        // `cpplaunch ... > >(tee log)` leaves tee as a child of the exec'd agent.
        foreign_children_(ForeignChildren()) {
    // Orphaned descendants (a data loader whose worker died) are reparented to the agent
    // instead of init, so they can be reaped and killed with the job.
    posix::BecomeSubreaper();
    posix::AddRestartFlag(SIGCHLD);
    WaitSigchld();
  }

  ~PosixWorkerGroup() override {
    for (auto& [pid, worker] : workers_) {
      if (!worker.reported) posix::KillGroup(pid, SIGKILL);
    }
  }

  void SetExitCallback(ExitCallback on_exit) override { on_exit_ = std::move(on_exit); }

  void Start(std::vector<ProcessSpec> specs) override {
    if (running_ != 0) throw std::logic_error("WorkerGroup::Start while workers are running");
    RetireAttempt();
    for (ProcessSpec& spec : specs) {
      // Read per worker: the first one's birth may change how the sentinel contains the rest.
      const int procs_fd = options_.sentinel ? options_.sentinel->cgroup_procs_fd() : -1;
      const int dir_fd = options_.sentinel ? options_.sentinel->cgroup_dir_fd() : -1;
      std::unique_ptr<PreparedChild> child = Prepare(std::move(spec), procs_fd, dir_fd);
      const pid_t pid = Spawn(child->plan);
      // Registered before the next spawn: an agent SIGKILLed from here on still takes this
      // worker along. Exits are only handled once the loop runs again, after the registration.
      if (options_.sentinel) options_.sentinel->Watch(pid);
      Worker& worker = workers_[pid];
      worker.id = child->spec.id;
      ++running_;
      WatchPidfd(pid, worker);
    }
  }

  // Born in the job cgroup when the sentinel has one; the first refusal tells the sentinel,
  // which settles how this and later workers are contained.
  pid_t Spawn(posix::ChildPlan& plan) {
    posix::SpawnOutcome spawned = posix::SpawnChild(plan);
    if (spawned.pid >= 0) return spawned.pid;
    options_.sentinel->CloneIntoCgroupRefused(spawned.clone_error);
    plan.cgroup_dir_fd = options_.sentinel->cgroup_dir_fd();
    plan.cgroup_procs_fd = options_.sentinel->cgroup_procs_fd();
    return posix::SpawnChild(plan).pid;  // no cgroup_dir_fd now: vfork, which throws on failure
  }

  void Signal(int signo) override {
    for (auto& [pid, worker] : workers_) {
      if (!worker.reported) posix::KillGroup(pid, signo);
    }
  }

  void StopAll(int signo, std::chrono::milliseconds grace, StopCallback done) override {
    stop_callbacks_.push_back(std::move(done));
    SignalEverything(signo);
    if (stopping_) return;
    stopping_ = true;
    killed_ = false;
    if (running_ == 0) {
      // Posted: as on every other path, `done` runs from the loop, never inside StopAll.
      asio::post(io_, Guarded([this] { KillStage(); }));
      return;
    }
    grace_timer_.expires_after(grace);
    grace_timer_.async_wait([this, guard = Guard()](const boost::system::error_code& ec) {
      if (guard.expired() || ec) return;
      KillStage();
    });
  }

  std::size_t running() const override { return running_; }

  std::vector<LiveWorker> live() const override {
    std::vector<LiveWorker> workers;
    for (const auto& [pid, worker] : workers_) {
      if (!worker.reported && !worker.abandoned) workers.push_back(LiveWorker{worker.id, pid});
    }
    std::sort(workers.begin(), workers.end(),
              [](const LiveWorker& a, const LiveWorker& b) { return a.id < b.id; });
    return workers;
  }

 private:
  struct Worker {
    int id = 0;
    bool reported = false;
    bool abandoned = false;
    std::unique_ptr<asio::posix::stream_descriptor> pidfd;
  };

  std::weak_ptr<char> Guard() const { return alive_; }

  std::function<void()> Guarded(std::function<void()> f) {
    return [guard = Guard(), f = std::move(f)] {
      if (!guard.expired()) f();
    };
  }

  void WatchPidfd(pid_t pid, Worker& worker) {
    if (!options_.use_pidfd || !pidfd_supported_) return;
    // Opening by pid is race-free here: the child is unreaped (only this loop reaps), so its
    // pid cannot belong to anyone else yet.
    posix::OpenedPidfd opened = posix::PidfdOpen(pid);
    if (!opened.fd) {
      if (opened.unsupported()) pidfd_supported_ = false;  // SIGCHLD alone from now on
      return;  // ESRCH cannot happen for an unreaped child; SIGCHLD covers it anyway
    }
    // The stream_descriptor adopts the pidfd and closes it when the worker is reported.
    worker.pidfd = std::make_unique<asio::posix::stream_descriptor>(io_, opened.fd.release());
    ArmPidfd(pid, worker);
  }

  void ArmPidfd(pid_t pid, Worker& worker) {
    worker.pidfd->async_wait(asio::posix::stream_descriptor::wait_read,
                             [this, pid, guard = Guard()](const boost::system::error_code& ec) {
                               if (guard.expired() || ec) return;
                               auto it = workers_.find(pid);
                               if (it == workers_.end() || it->second.reported || !it->second.pidfd)
                                 return;
                               // nullopt (woken without a reapable exit): wait again.
                               std::optional<WorkerExit> exit =
                                   posix::TryReapPidfd(it->second.pidfd->native_handle());
                               if (exit) {
                                 Report(pid, *exit);
                               } else if (!it->second.reported) {
                                 ArmPidfd(pid, it->second);
                               }
                             });
  }

  void WaitSigchld() {
    sigchld_.async_wait([this, guard = Guard()](const boost::system::error_code& ec, int) {
      if (guard.expired() || ec) return;
      ReapAll();
      WaitSigchld();
    });
  }

  // Reaps every exited child: workers whose pidfd has not fired yet (or every worker without
  // pidfds), the sentinel, and orphans the agent adopted as subreaper.
  void ReapAll() {
    while (std::optional<posix::Reaped> reaped = posix::TryReapAny()) {
      auto it = workers_.find(reaped->pid);
      if (it != workers_.end() && it->second.abandoned) {
        workers_.erase(it);  // finally died; its pid may now be reused by a new worker
      } else if (it != workers_.end() && !it->second.reported) {
        Report(reaped->pid, reaped->exit);
      }  // else an orphan adopted as subreaper (or the sentinel): reaped silently
    }
  }

  void Report(pid_t pid, const WorkerExit& exit) {
    Worker& worker = workers_.at(pid);
    worker.reported = true;
    worker.pidfd.reset();
    --running_;
    // The sentinel may forget a group once it is empty: its id can then be reused by an
    // unrelated process group, which the sentinel must never kill.
    if (options_.sentinel && !posix::GroupExists(pid)) options_.sentinel->Forget(pid);
    WorkerExitEvent event{worker.id, pid, exit, std::chrono::system_clock::now()};
    if (on_exit_) on_exit_(event);
    if (stopping_ && running_ == 0) {
      grace_timer_.cancel();
      asio::post(io_, Guarded([this] { KillStage(); }));
    }
  }

  // Sends `signo` to every live worker's group and to leftovers of exited workers: orphans the
  // agent adopted (and their groups when they lead one or belong to an exited worker's group).
  // A group whose leader was reaped is only addressed through a living member, because an
  // empty group's id may already belong to someone else.
  void SignalEverything(int signo) {
    Signal(signo);
    for (pid_t child : posix::ChildrenOfSelf()) {
      if (workers_.count(child) != 0 || foreign_children_.count(child) != 0) continue;
      if (options_.sentinel && child == options_.sentinel->pid()) continue;
      pid_t group = posix::ProcessGroupOf(child);
      if (group == child || workers_.count(group) != 0) posix::KillGroup(group, signo);
      posix::KillProcess(child, signo);
    }
  }

  void KillStage() {
    if (!stopping_) return;
    if (!killed_) {
      killed_ = true;
      SignalEverything(SIGKILL);
      if (options_.sentinel) options_.sentinel->KillCgroup();
    }
    if (running_ == 0) {
      Complete();
      return;
    }
    grace_timer_.expires_after(options_.kill_wait);
    grace_timer_.async_wait([this, guard = Guard()](const boost::system::error_code& ec) {
      if (guard.expired() || ec) return;
      Complete();
    });
  }

  void Complete() {
    if (!stopping_) return;
    ReapAll();  // an exit may be pending behind the timer
    StopResult result;
    for (auto& [pid, worker] : workers_) {
      if (worker.reported || worker.abandoned) continue;
      worker.abandoned = true;
      worker.pidfd.reset();
      --running_;
      // The agent says so, with the process's state and wait channel (DescribeUnkillable).
      result.unreaped.push_back(WorkerExitEvent{worker.id, pid, WorkerExit::Signaled(SIGKILL),
                                                std::chrono::system_clock::now()});
    }
    // Everything was SIGKILLed: the sentinel must not keep ids that may soon be reused.
    for (auto& [pid, worker] : workers_) {
      if (options_.sentinel && !worker.abandoned) options_.sentinel->Forget(pid);
    }
    stopping_ = false;
    std::vector<StopCallback> callbacks;
    callbacks.swap(stop_callbacks_);
    for (StopCallback& done : callbacks) {
      if (done) done(result);
    }
  }

  // Forgets the finished attempt's workers (abandoned ones stay known, so that reaping them
  // later is silent).
  void RetireAttempt() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (options_.sentinel && !it->second.abandoned) options_.sentinel->Forget(it->first);
      it = it->second.abandoned ? std::next(it) : workers_.erase(it);
    }
  }

  asio::io_context& io_;
  PosixWorkerGroupOptions options_;
  asio::signal_set sigchld_;
  asio::steady_timer grace_timer_;
  ExitCallback on_exit_;
  std::map<pid_t, Worker> workers_;
  std::set<pid_t> foreign_children_;  // never signalled
  std::size_t running_ = 0;
  bool pidfd_supported_ = true;
  bool stopping_ = false;
  bool killed_ = false;
  std::vector<StopCallback> stop_callbacks_;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace

std::unique_ptr<WorkerGroup> MakePosixWorkerGroup(asio::io_context& io,
                                                  PosixWorkerGroupOptions options) {
  return std::make_unique<PosixWorkerGroup>(io, options);
}

}  // namespace cpplaunch
