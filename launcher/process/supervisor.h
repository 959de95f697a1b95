#pragma once
// Supervisor: the policy for one attempt of the local worker group.
//
//   * the first failure (non-zero exit, or death by a signal) stops every other worker:
//     `stop_signal` (SIGTERM) to every process group, SIGKILL after `shutdown_timeout`;
//   * a signal received by the agent is forwarded to every worker's process group and followed
//     by the same teardown (that signal, then SIGKILL); the attempt ends as kSignaled, which the
//     agent turns into exit code 1 as torchrun does; it never restarts. A second signal (Ctrl-C
//     again) SIGKILLs every worker at once instead of waiting out the grace;
//   * a signal the agent only passes on (--forward-signals) reaches every worker's process
//     group and changes nothing else;
//   * every worker exiting 0 is success (leftover grandchildren are still swept);
//   * a failure with restarts left ends as kRestart (the agent re-rendezvouses and starts the
//     attempt restart_count + 1), otherwise kFailed.
//
// Every exit is recorded with its time, pid and local rank, and classified:
//   kFailed  - failed on its own: any non-ok exit seen before the teardown began, and after
//              it any exit other than death by a signal the supervisor sent (a worker that
//              catches SIGTERM and exits 1, or crashes with SIGSEGV, is a failure);
//   kStopped - killed by a signal the supervisor sent (teardown signal, forwarded signal or
//              SIGKILL) after the teardown began: a victim, never the root cause;
//   kSucceeded - exit code 0.
// The root cause is the earliest kFailed exit (ties: first observed). The failure report may
// refine it with error-file timestamps.
//
// Pure policy: no system calls and no clock. Processes, timers and the event loop live behind
// WorkerGroup. Threads: call everything on the group's loop thread; `done` runs there too.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "launcher/process/worker_group.h"

namespace cpplaunch {

struct SupervisorConfig {
  // Grace between the stop signal and SIGKILL (torchrun's --shutdown-timeout, default 30 s).
  std::chrono::milliseconds shutdown_timeout{std::chrono::seconds(30)};
  int max_restarts = 0;  // torchrun's --max-restarts
  int stop_signal = 15;  // SIGTERM: what the teardown after a failure sends first
  // Called with the first failure of an attempt before its teardown begins; the teardown waits
  // until `proceed` is called (once; at once is fine). The multi-host job publishes the failure
  // to the other hosts first, so that no exit the teardown causes here (or, through the
  // workers' own connections, on another host) can pass for the root cause. Exits seen while
  // waiting are recorded as failures or successes as usual; a signal or RequestStop() starts
  // the teardown at once. Empty: the teardown begins at once.
  std::function<void(std::function<void()> proceed)> before_failure_teardown;
  // Called once when the teardown after a failure begins, with the root failure and how many
  // workers are still running (those that get `stop_signal` now and SIGKILL after the grace), so
  // the user hears at once what failed rather than after the grace. Empty: not called.
  std::function<void(const WorkerExitEvent& root, std::size_t still_running)> on_failure_teardown;
};

enum class ExitRole { kSucceeded, kFailed, kStopped };

struct ExitRecord {
  WorkerExitEvent event;
  ExitRole role = ExitRole::kSucceeded;
};

enum class AttemptOutcome {
  kSucceeded,  // every worker exited 0
  kFailed,     // a worker failed and no restart is left
  kRestart,    // a worker failed and restarts are left: start attempt restart_count + 1
  kSignaled,   // the agent received a signal; exit 1 without restarting
  kStopped,    // RequestStop() ended the attempt (e.g. another host failed)
};

struct AttemptResult {
  AttemptOutcome outcome = AttemptOutcome::kSucceeded;
  int restart_count = 0;                    // the attempt that ended
  std::vector<ExitRecord> exits;            // every reported exit, in the order observed
  std::optional<std::size_t> root_failure;  // index into `exits` of the earliest kFailed exit
  int signal = 0;                           // kSignaled: the signal the agent received
  std::vector<WorkerExitEvent> unreaped;    // workers that survived SIGKILL (D state), abandoned
  bool killed_on_second_signal = false;     // a second agent signal SIGKILLed the workers
};

const char* OutcomeName(AttemptOutcome outcome);  // "succeeded", "restart", ...

class Supervisor {
 public:
  using DoneCallback = std::function<void(const AttemptResult&)>;

  // Keeps a reference to `group`, which must outlive the supervisor. Installs its own exit
  // callback on the group.
  Supervisor(WorkerGroup& group, SupervisorConfig config);
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts attempt `restart_count` with `specs` and returns. `done` is called once, when every
  // worker has been reaped (or abandoned after SIGKILL). Throws what WorkerGroup::Start throws;
  // workers started before such a failure are stopped and `done` is then never called.
  // REQUIRES: !running().
  void Run(std::vector<ProcessSpec> specs, int restart_count, DoneCallback done);

  // The agent received `signo`: forward it to every worker, then tear down (signo, grace,
  // SIGKILL). A second signal SIGKILLs every worker now. Returns false (and does nothing) when
  // no attempt is running, so the agent can handle the signal itself (e.g. during rendezvous).
  bool OnSignal(int signo);

  // The agent received a --forward-signals signal (a preemption notice): send it to every
  // worker's process group and nothing more; the attempt goes on. A worker that dies of it
  // (no handler) is a failure like any other, since no teardown sent it. Returns false (and
  // does nothing) when no attempt is running.
  bool PassOn(int signo);

  // Ends the attempt from outside (another host failed, the store went away): teardown with
  // `stop_signal`, outcome kStopped unless a local failure came first. No-op when idle.
  void RequestStop();
  // Ends the attempt as failed although no worker failed by itself (a hang whose workers did
  // not die of the stack request): the teardown of RequestStop, and the outcome of a failure,
  // kRestart with restarts left, else kFailed, so that it uses a restart as a worker's failure
  // would. No-op when idle.
  void FailAttempt();

  bool running() const { return done_ != nullptr; }

 private:
  enum class Cause { kNone, kFailure, kSignal, kRequest };

  void OnExit(const WorkerExitEvent& event);
  ExitRole Classify(const WorkerExit& exit) const;
  void HoldThenTearDown();
  void BeginTeardown(Cause cause, int signo);
  void Sweep();
  void OnStopped(const StopResult& stop);
  AttemptOutcome Outcome() const;
  void Finish();

  WorkerGroup& group_;
  SupervisorConfig config_;
  DoneCallback done_;
  AttemptResult result_;
  Cause cause_ = Cause::kNone;
  std::set<int> sent_signals_;  // signals the supervisor sent; deaths by them are kStopped
  bool stopping_ = false;       // a StopAll is in flight
  bool holding_ = false;        // waiting for before_failure_teardown to proceed
  bool failed_ = false;         // FailAttempt(): a failure without a failed worker
  unsigned attempt_ = 0;        // tells a late `proceed` of an ended attempt apart
};

}  // namespace cpplaunch
