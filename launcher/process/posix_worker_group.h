#pragma once
// PosixWorkerGroup: the real WorkerGroup, driven by a caller-provided boost::asio::io_context.
//
// How it works (details in posix_worker_group.cpp and posix_sys.cpp):
//   * clone3(CLONE_INTO_CGROUP) born in the job's cgroup when the JobSentinel has one, else
//     vfork, the child joining the cgroup itself (posix_sys.cpp explains the choice, with
//     measurements); the child binds its CPUs (--numa-binding), calls
//     setsid() (own session and process group), sets PR_SET_PDEATHSIG(SIGKILL), restores default
//     signal dispositions and an empty mask, installs stdout/stderr, closes every other
//     descriptor (close_range) and execs. argv[0] is resolved on PATH in the parent.
//   * exits arrive as events: a pidfd per worker (pidfd_open, readable when the worker exits)
//     waited on with stream_descriptor::async_wait, plus a SIGCHLD signal_set that reaps
//     orphaned descendants adopted by the agent (it is a child subreaper) and, when pidfds are
//     unavailable (Linux < 5.3), every worker. No polling, no threads of its own.
//   * Signal/StopAll address process groups (kill(-pgid)), so grandchildren that stayed in their
//     worker's group are reached; the SIGKILL stage also kills the job's cgroup and any orphan
//     the agent adopted, so daemonized descendants go too.
//
// Because it is a subreaper that reaps with waitpid(-1), the group owns the reaping of every
// child of the process: at most one PosixWorkerGroup may exist per process, and other code must
// not wait for children of its own (JobSentinel, which tolerates this, excepted).
// PR_SET_PDEATHSIG fires when the *thread* that forked a worker ends: call Start() from the
// long-lived thread that runs the io_context.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>

#include "launcher/process/worker_group.h"

namespace cpplaunch {

class JobSentinel;

struct PosixWorkerGroupOptions {
  // Containment beyond process groups: workers join its cgroup, their process groups are
  // registered with it so they die even if the agent is SIGKILLed. Not owned; may be null
  // (process groups and PDEATHSIG only). Must outlive the group.
  JobSentinel* sentinel = nullptr;
  // After SIGKILL, how long StopAll waits for the reaping before abandoning a worker (D state).
  std::chrono::milliseconds kill_wait{std::chrono::seconds(5)};
  // false: ignore pidfds and rely on SIGCHLD alone (the path taken on kernels without pidfd).
  bool use_pidfd = true;
};

// Creates the group on `io` (which must outlive it) and makes the process a child subreaper.
// The destructor SIGKILLs the process groups of workers still running and does not wait.
std::unique_ptr<WorkerGroup> MakePosixWorkerGroup(boost::asio::io_context& io,
                                                  PosixWorkerGroupOptions options = {});

}  // namespace cpplaunch
