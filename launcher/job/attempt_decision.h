#pragma once
// What the agent does once an attempt of its workers has ended: start another attempt (a
// restart, or a new rendezvous round after a membership change), or exit with a code, and
// which failure report to print first. Pure: the single-host and multi-host jobs call these
// with what they know; the agent carries the decision out.

#include <chrono>
#include <string>

#include "base/exit_code.h"
#include "launcher/multihost/multi_host_session.h"
#include "launcher/process/supervisor.h"
#include "rendezvous/core/node_info.h"

namespace cpplaunch {

enum class NextStep { kNextAttempt, kExit };

enum class FailureReportKind {
  kNone,
  kAttempt,  // the "failed (exitcode: ...)" lines only: another attempt follows
  kFinal,    // the lines, the failure summary and the agent's error file
};

struct AttemptDecision {
  NextStep next = NextStep::kExit;
  ExitCode exit_code = ExitCode::kFailure;  // kExit only
  bool consumes_restart = false;            // kNextAttempt: the next attempt is a restart
  FailureReportKind report = FailureReportKind::kNone;  // printed before `message`
  std::string message;  // one line for the agent's stderr ("" = none)

  friend bool operator==(const AttemptDecision&, const AttemptDecision&) = default;
};

// Single host: this host is the job. `interrupted_by` is the signal the agent received while
// no attempt was running (0 = none); it ends the job with code 1 unless the attempt itself
// ended because of a forwarded signal.
AttemptDecision AfterLocalAttempt(const AttemptResult& result, int interrupted_by,
                                  int max_restarts);

// Multi-host, before the round's end is known: a signal (`interrupted_by`, received at any
// time during the attempt) or a forwarded signal ends the job on this host at once.
// `decided` is false when the round's end (or the exit barrier) decides instead.
struct EarlyDecision {
  bool decided = false;
  AttemptDecision decision;
};
EarlyDecision BeforeRoundEnd(const AttemptResult& result, int interrupted_by);

// Multi-host: every host decides the same way from the same round end. A membership change
// starts a new round without consuming a restart; any other end restarts the job on every host
// while restarts are left (one job-wide count) unless the store is gone or the hosts disagree
// on the job; otherwise the job fails. Failures of this host's own workers are reported.
AttemptDecision AfterRoundEnd(const AttemptResult& result, const RoundEnd& end, int restart_count,
                              int max_restarts);

// Multi-host, after local success: the exit barrier's outcome when it did not end because of a
// round end (kInterrupted with a round end is decided by AfterRoundEnd).
AttemptDecision AfterExitBarrier(FinishOutcome outcome, std::chrono::milliseconds barrier_timeout);

}  // namespace cpplaunch
