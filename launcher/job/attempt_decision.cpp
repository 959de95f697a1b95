#include "launcher/job/attempt_decision.h"

#include "base/text.h"
#include "launcher/process/worker_exit.h"
#include "launcher/report/teardown_report.h"

namespace cpplaunch {
namespace {

AttemptDecision Exit(ExitCode code, FailureReportKind report = FailureReportKind::kNone,
                     std::string message = {}) {
  return AttemptDecision{NextStep::kExit, code, false, report, std::move(message)};
}

AttemptDecision NextAttempt(bool consumes_restart, FailureReportKind report, std::string message) {
  return AttemptDecision{NextStep::kNextAttempt, ExitCode::kFailure, consumes_restart, report,
                         std::move(message)};
}

// Exit 1 and no failure summary, as torchrun: its SignalException ends the agent with a
// traceback, not with the workers' failure box. The line says how they really stopped: some may
// have needed SIGKILL (after the grace, or at a second signal).
AttemptDecision StoppedBySignal(int signo, const AttemptResult& result) {
  std::string how = "workers stopped after " + SignalName(signo);
  if (std::string killed = SigkilledRanks(result); !killed.empty()) {
    how += result.killed_on_second_signal ? ", then SIGKILL at the second signal (local ranks "
                                          : ", then SIGKILL after --shutdown-timeout (local ranks ";
    how += killed + ")";
  }
  return Exit(ExitCode::kFailure, FailureReportKind::kNone, how + "; exiting with code 1");
}

// " after 2 restarts", or "" before any restart: the end says how much was tried.
std::string AfterRestarts(int restart_count) {
  if (restart_count <= 0) return "";
  return " after " + std::to_string(restart_count) + " restart" + (restart_count == 1 ? "" : "s");
}

bool LocalFailure(const AttemptResult& result) {
  return result.outcome == AttemptOutcome::kFailed || result.outcome == AttemptOutcome::kRestart;
}

}  // namespace

AttemptDecision AfterLocalAttempt(const AttemptResult& result, int interrupted_by,
                                  int max_restarts) {
  // A signal between attempts (or while the output drained) already said "stopping".
  if (interrupted_by != 0 && result.outcome != AttemptOutcome::kSignaled) {
    return Exit(ExitCode::kFailure);
  }
  switch (result.outcome) {
    case AttemptOutcome::kSucceeded:
      return Exit(ExitCode::kSuccess);
    case AttemptOutcome::kRestart:
      return NextAttempt(true, FailureReportKind::kAttempt,
                         "worker group failed; restarting it (restart " +
                             std::to_string(result.restart_count + 1) + " of " +
                             std::to_string(max_restarts) + ")");
    case AttemptOutcome::kFailed:
    case AttemptOutcome::kStopped:
      return Exit(ExitCode::kFailure, FailureReportKind::kFinal,
                  result.restart_count > 0
                      ? "worker group failed" + AfterRestarts(result.restart_count) +
                            " (--max-restarts=" + std::to_string(max_restarts) +
                            "); exiting with code 1"
                      : "");
    case AttemptOutcome::kSignaled:
      break;
  }
  return StoppedBySignal(result.signal, result);
}

EarlyDecision BeforeRoundEnd(const AttemptResult& result, int interrupted_by) {
  if (interrupted_by == 0 && result.outcome != AttemptOutcome::kSignaled) return {};
  return {true, StoppedBySignal(interrupted_by != 0 ? interrupted_by : result.signal, result)};
}

AttemptDecision AfterRoundEnd(const AttemptResult& result, const RoundEnd& end, int restart_count,
                              int max_restarts) {
  // As in torchrun, a membership change re-forms the group without consuming a restart.
  if (end.kind == RoundEndKind::kMembershipChange) {
    return NextAttempt(false, FailureReportKind::kNone,
                       "new rendezvous round after a membership change (the restart count "
                       "stays " +
                           std::to_string(restart_count) + ")");
  }
  // A member dropped while the round armed (rendezvous/c10d): its workers never ran, so nothing
  // failed; the rendezvous forms the next round without it. Only a race with the last member's
  // arming lets this notice reach a running round.
  if (end.kind == RoundEndKind::kMemberDropped) {
    return NextAttempt(false, FailureReportKind::kNone,
                       "new rendezvous round without a dropped host (the restart count stays " +
                           std::to_string(restart_count) + ")");
  }
  // Never restart without the store (the next round needs it) or when the hosts disagree on
  // the job (every later round would disagree the same way).
  const bool restart = end.kind != RoundEndKind::kStoreLost &&
                       end.kind != RoundEndKind::kConfigError && restart_count < max_restarts;
  FailureReportKind report = FailureReportKind::kNone;
  if (LocalFailure(result))
    report = restart ? FailureReportKind::kAttempt : FailureReportKind::kFinal;
  if (restart) {
    return NextAttempt(
        true, report,
        "job attempt " + std::to_string(restart_count) + " failed (root cause: " + end.Describe() +
            "); restarting on every host (restart " + std::to_string(restart_count + 1) + " of " +
            std::to_string(max_restarts) + ")");
  }
  return Exit(ExitCode::kFailure, report,
              "job failed" + AfterRestarts(restart_count) + "; root cause: " + end.Describe());
}

AttemptDecision AfterExitBarrier(FinishOutcome outcome, std::chrono::milliseconds barrier_timeout) {
  switch (outcome) {
    case FinishOutcome::kPassed:
      return Exit(ExitCode::kSuccess);
    case FinishOutcome::kTimedOut:
      // This host's workers did their part; a slow or lost peer does not make them fail.
      return Exit(ExitCode::kSuccess, FailureReportKind::kNone,
                  "exit barrier: not every host finished within " + FormatSeconds(barrier_timeout) +
                      " (--exit-barrier-timeout); this host's workers succeeded, exiting");
    case FinishOutcome::kInterrupted:
      break;
  }
  return Exit(ExitCode::kFailure, FailureReportKind::kNone,
              "error: lost the other hosts during the exit barrier");
}

}  // namespace cpplaunch
