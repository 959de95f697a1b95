#pragma once
// WorkerGroup: starts the local workers of one attempt, reports each exit once, stops them all.
//
// The interface is what the Supervisor (the policy) depends on; PosixWorkerGroup
// (posix_worker_group.h) is the real implementation and tests use a fake. It never blocks the
// caller: exits and the completion of StopAll arrive as callbacks.
//
// Threads: every method must be called on the thread that runs the group's event loop (for the
// POSIX group: the thread running its io_context), and every callback is invoked there, never
// from inside the method that caused it.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launcher/process/worker_exit.h"

namespace cpplaunch {

// One process to start.
struct ProcessSpec {
  int id = 0;                      // the local rank; unique within one Start()
  std::vector<std::string> argv;   // argv[0] without a '/' is searched on PATH, as execvp does
                                   // (the PATH of `env` if it has one, else the agent's PATH)
  std::vector<std::string> env;    // the complete environment, "KEY=VALUE" entries
  std::optional<std::string> cwd;  // working directory; unset = the agent's
  int stdout_fd = -1;              // becomes the child's fd 1; -1 = inherit the agent's stdout
  int stderr_fd = -1;              // becomes the child's fd 2; -1 = inherit the agent's stderr
};

// How and when one worker ended.
struct WorkerExitEvent {
  int id = 0;  // ProcessSpec::id
  pid_t pid = 0;
  WorkerExit exit = WorkerExit::Exited(0);
  std::chrono::system_clock::time_point time;  // when the agent observed the exit
};

// A started worker whose exit has not been reported yet.
struct LiveWorker {
  int id = 0;  // ProcessSpec::id
  pid_t pid = 0;
};

// Result of StopAll().
struct StopResult {
  // Workers still unreaped after SIGKILL and the bounded kill wait (typically stuck in D state
  // on a hung device or file system). They are abandoned: no exit event is ever reported for
  // them, and the caller should log them and go on.
  std::vector<WorkerExitEvent> unreaped;  // `exit` and `time` are meaningless here
};

class WorkerGroup {
 public:
  using ExitCallback = std::function<void(const WorkerExitEvent&)>;
  using StopCallback = std::function<void(const StopResult&)>;

  virtual ~WorkerGroup() = default;

  // Receives every worker exit, exactly once per started worker (unless abandoned by StopAll).
  // When it runs, running() already excludes that worker. Set it before Start().
  virtual void SetExitCallback(ExitCallback on_exit) = 0;

  // Starts one process per spec, in order, and returns without waiting for them.
  // A program that cannot be executed (not found, not executable, bad cwd) is not an error
  // here: the child prints "cpplaunch: cannot execute '<prog>' (local rank N): <errno text>" on
  // the agent's stderr and its exit is reported as code 127 (not found) or 126 (found but not
  // executable, or the cwd is unusable), as a shell does.
  // Throws std::system_error when the agent itself lacks resources (fork, pidfd); workers
  // started before the failure keep running and must be stopped with StopAll().
  // REQUIRES: no worker of a previous Start() is still running.
  // The caller keeps ownership of stdout_fd/stderr_fd and may close them once Start() returns.
  virtual void Start(std::vector<ProcessSpec> specs) = 0;

  // Sends `signo` to the process group of every worker not yet reaped. Never blocks.
  virtual void Signal(int signo) = 0;

  // Stops every worker: sends `signo` to every worker's process group, waits until all are
  // reaped or `grace` passes, then SIGKILLs whatever remains (whole process groups, and the
  // job's cgroup when one is used, so grandchildren go too) and waits a bounded time for the
  // reaping. Exit events of the stopped workers are delivered before `done`, which is called
  // exactly once. Calling StopAll while a stop is in progress only sends `signo` again; the
  // first `done` stands and the second is called with it.
  // Leftover descendants of workers that already exited are killed too, so after `done` nothing
  // started by this group remains (except unreaped D-state workers, listed in the result).
  virtual void StopAll(int signo, std::chrono::milliseconds grace, StopCallback done) = 0;

  // Number of started workers whose exit has not been reported yet.
  virtual std::size_t running() const = 0;

  // Those workers (the agent reads their cgroups and CPU time in /proc), ordered by id.
  virtual std::vector<LiveWorker> live() const = 0;
};

}  // namespace cpplaunch
