#pragma once
// What the agent tells those who listen to it: the console's failure report, torchelastic's
// events, the watchdog, a status endpoint. The agent conducts (it starts an attempt, hears what
// happened and decides); reporting is the listeners' business. The agent calls one fan-out
// (AgentListeners) and never a particular listener; the list is built outside the agent
// (agent_listeners.h), so a new listener needs no change to the agent.
//
// The order of one attempt's events:
//   OnAttemptStarting -> OnAttemptStarted -> OnWorkerExit... -> OnAttemptDone -> OnDecision
// then the next attempt's, or OnAgentEnded (once; it also ends a run with no attempt at all).
// A run whose workers cannot be started (OnAttemptStarting without OnAttemptStarted) goes
// straight to OnAgentEnded.
//
// Threads: every method is called on the agent's loop thread; a listener must not block it.
// References in the events are valid only during the call.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/exit_code.h"
#include "launcher/job/attempt_decision.h"
#include "launcher/job/job.h"
#include "launcher/output/worker_output.h"
#include "launcher/process/supervisor.h"
#include "launcher/process/worker_group.h"
#include "launcher/report/failure_findings.h"

namespace cpplaunch {

// The attempt's workers run.
struct AttemptStarted {
  const Round& round;               // restart count, ranks, world size, MASTER_ADDR:PORT
  std::vector<LiveWorker> workers;  // each worker's local rank (id) and pid
  std::chrono::system_clock::time_point started;
  // The attempt's output (null in tests without one): a listener may add an observer here.
  WorkerOutput* output = nullptr;
};

// The job decided what follows an attempt (after its output drained).
struct AttemptDecided {
  const Round& round;
  const AttemptResult& result;      // how it ended, every exit, the supervisor's root failure
  const AttemptDecision& decision;  // next attempt (a restart, or a new round) or the exit code
  // Set when the decision reports the attempt's failures (FailureReportKind): what failed and
  // why; with `final`, the error files and the root cause.
  const FailureFindings* failures = nullptr;
};

// The agent's run is over.
struct AgentEnded {
  ExitCode decided = ExitCode::kFailure;  // the agent's decision
  int exit_status = 1;                    // what the process returns (--exit-code applied)
  // What ended the agent itself (a signal, its own failure); nullopt when its run came to its
  // end, whatever the workers did.
  const std::optional<std::string>& error;
};

class AgentListener {
 public:
  virtual ~AgentListener() = default;

  // The rendezvous agreed on an attempt's world; its workers are about to be started.
  virtual void OnAttemptStarting(const Round& /*round*/) {}
  virtual void OnAttemptStarted(const AttemptStarted& /*started*/) {}
  // A worker exited (before the supervisor and the job act on it).
  virtual void OnWorkerExit(const WorkerExitEvent& /*event*/) {}
  // Every worker of the attempt is reaped (or abandoned); its output still drains.
  virtual void OnAttemptDone(const AttemptResult& /*result*/) {}
  virtual void OnDecision(const AttemptDecided& /*decided*/) {}
  virtual void OnAgentEnded(const AgentEnded& /*ended*/) {}

  // A question, not an event: why the worker process `pid` of the current attempt got a signal
  // this listener sent itself (the file-timer watchdog kills workers), in plain words for its
  // failure's reason; nullopt when it sent none. The failure findings ask it before they explain
  // a signal as one from outside the job.
  virtual std::optional<std::string> SignalSent(int /*pid*/) const { return std::nullopt; }
};

// Every listener hears every event, in the order they were added.
class AgentListeners final : public AgentListener {
 public:
  void Add(std::unique_ptr<AgentListener> listener);

  void OnAttemptStarting(const Round& round) override;
  void OnAttemptStarted(const AttemptStarted& started) override;
  void OnWorkerExit(const WorkerExitEvent& event) override;
  void OnAttemptDone(const AttemptResult& result) override;
  void OnDecision(const AttemptDecided& decided) override;
  void OnAgentEnded(const AgentEnded& ended) override;
  // The first listener's answer.
  std::optional<std::string> SignalSent(int pid) const override;

 private:
  std::vector<std::unique_ptr<AgentListener>> listeners_;
};

}  // namespace cpplaunch
