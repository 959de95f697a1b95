// The agent's decisions after an attempt, single host and multi-host, as pure functions.

#include "launcher/job/attempt_decision.h"

#include <signal.h>

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

AttemptResult Outcome(AttemptOutcome outcome, int restart_count = 0, int signal = 0) {
  AttemptResult result;
  result.outcome = outcome;
  result.restart_count = restart_count;
  result.signal = signal;
  return result;
}

RoundEnd End(RoundEndKind kind) {
  RoundEnd end;
  end.kind = kind;
  end.host = "node1";
  end.node_rank = 1;
  return end;
}

TEST_CASE("Single host: success exits 0 without a report", "[agent][decision]") {
  AttemptDecision d = AfterLocalAttempt(Outcome(AttemptOutcome::kSucceeded), 0, 3);
  CHECK(d.next == NextStep::kExit);
  CHECK(d.exit_code == ExitCode::kSuccess);
  CHECK(d.report == FailureReportKind::kNone);
  CHECK(d.message.empty());
}

TEST_CASE("Single host: a failure with restarts left restarts after the attempt's lines",
          "[agent][decision]") {
  AttemptDecision d = AfterLocalAttempt(Outcome(AttemptOutcome::kRestart, 1), 0, 3);
  CHECK(d.next == NextStep::kNextAttempt);
  CHECK(d.consumes_restart);
  CHECK(d.report == FailureReportKind::kAttempt);
  CHECK(d.message == "worker group failed; restarting it (restart 2 of 3)");
}

TEST_CASE("Single host: a final failure or stop exits 1 with the full report",
          "[agent][decision]") {
  for (AttemptOutcome outcome : {AttemptOutcome::kFailed, AttemptOutcome::kStopped}) {
    AttemptDecision d = AfterLocalAttempt(Outcome(outcome, 3), 0, 3);
    CHECK(d.next == NextStep::kExit);
    CHECK(d.exit_code == ExitCode::kFailure);
    CHECK(d.report == FailureReportKind::kFinal);
    CHECK(d.message ==
          "worker group failed after 3 restarts (--max-restarts=3); exiting with code 1");
  }
  // Without a restart there is nothing to count.
  CHECK(AfterLocalAttempt(Outcome(AttemptOutcome::kFailed, 0), 0, 0).message.empty());
  CHECK(AfterLocalAttempt(Outcome(AttemptOutcome::kFailed, 1), 0, 1).message ==
        "worker group failed after 1 restart (--max-restarts=1); exiting with code 1");
}

TEST_CASE("Single host: a forwarded signal exits 1 naming it", "[agent][decision]") {
  AttemptDecision d = AfterLocalAttempt(Outcome(AttemptOutcome::kSignaled, 0, SIGTERM), 0, 3);
  CHECK(d.exit_code == ExitCode::kFailure);
  CHECK(d.report == FailureReportKind::kNone);
  CHECK(d.message == "workers stopped after SIGTERM; exiting with code 1");
  // A later signal does not change which one stopped the workers.
  CHECK(AfterLocalAttempt(Outcome(AttemptOutcome::kSignaled, 0, SIGTERM), SIGINT, 3) == d);
}

TEST_CASE("Single host: the end line says which workers needed SIGKILL", "[agent][decision]") {
  AttemptResult result = Outcome(AttemptOutcome::kSignaled, 0, SIGINT);
  result.exits.push_back(
      {WorkerExitEvent{0, 100, WorkerExit::Signaled(SIGINT), {}}, ExitRole::kStopped});
  result.exits.push_back(
      {WorkerExitEvent{1, 101, WorkerExit::Signaled(SIGKILL), {}}, ExitRole::kStopped});
  CHECK(AfterLocalAttempt(result, 0, 3).message ==
        "workers stopped after SIGINT, then SIGKILL after --shutdown-timeout (local ranks 1); "
        "exiting with code 1");
  result.killed_on_second_signal = true;
  CHECK(AfterLocalAttempt(result, 0, 3).message ==
        "workers stopped after SIGINT, then SIGKILL at the second signal (local ranks 1); "
        "exiting with code 1");
}

TEST_CASE("Single host: a signal between attempts ends the job quietly, never restarting",
          "[agent][decision]") {
  for (AttemptOutcome outcome :
       {AttemptOutcome::kRestart, AttemptOutcome::kSucceeded, AttemptOutcome::kFailed}) {
    AttemptDecision d = AfterLocalAttempt(Outcome(outcome), SIGINT, 3);
    CHECK(d.next == NextStep::kExit);
    CHECK(d.exit_code == ExitCode::kFailure);
    CHECK(d.report == FailureReportKind::kNone);
    CHECK(d.message.empty());
  }
}

TEST_CASE("Multi-host: a signal decides before the round's end", "[agent][decision]") {
  CHECK(!BeforeRoundEnd(Outcome(AttemptOutcome::kRestart), 0).decided);
  CHECK(!BeforeRoundEnd(Outcome(AttemptOutcome::kSucceeded), 0).decided);
  EarlyDecision received = BeforeRoundEnd(Outcome(AttemptOutcome::kStopped), SIGHUP);
  REQUIRE(received.decided);
  CHECK(received.decision.exit_code == ExitCode::kFailure);
  CHECK(received.decision.message == "workers stopped after SIGHUP; exiting with code 1");
  EarlyDecision forwarded = BeforeRoundEnd(Outcome(AttemptOutcome::kSignaled, 0, SIGTERM), 0);
  REQUIRE(forwarded.decided);
  CHECK(forwarded.decision.message == "workers stopped after SIGTERM; exiting with code 1");
}

TEST_CASE("Multi-host: a membership change starts a new round without a restart",
          "[agent][decision]") {
  AttemptDecision d =
      AfterRoundEnd(Outcome(AttemptOutcome::kStopped), End(RoundEndKind::kMembershipChange), 2, 3);
  CHECK(d.next == NextStep::kNextAttempt);
  CHECK(!d.consumes_restart);
  CHECK(d.report == FailureReportKind::kNone);
  CHECK(d.message == "new rendezvous round after a membership change (the restart count stays 2)");
}

TEST_CASE("Multi-host: a failure restarts every host while restarts are left",
          "[agent][decision]") {
  const RoundEnd end = End(RoundEndKind::kWorkerFailure);
  AttemptDecision local = AfterRoundEnd(Outcome(AttemptOutcome::kRestart), end, 0, 2);
  CHECK(local.next == NextStep::kNextAttempt);
  CHECK(local.consumes_restart);
  CHECK(local.report == FailureReportKind::kAttempt);
  CHECK(local.message == "job attempt 0 failed (root cause: " + end.Describe() +
                             "); restarting on every host (restart 1 of 2)");
  // Workers stopped because another host failed are not this host's failures.
  AttemptDecision remote = AfterRoundEnd(Outcome(AttemptOutcome::kStopped), end, 0, 2);
  CHECK(remote.report == FailureReportKind::kNone);
  CHECK(remote.next == NextStep::kNextAttempt);
}

TEST_CASE("Multi-host: no restart left, a lost store or a config error fails the job",
          "[agent][decision]") {
  AttemptDecision spent =
      AfterRoundEnd(Outcome(AttemptOutcome::kFailed, 2), End(RoundEndKind::kWorkerFailure), 2, 2);
  CHECK(spent.next == NextStep::kExit);
  CHECK(spent.exit_code == ExitCode::kFailure);
  CHECK(spent.report == FailureReportKind::kFinal);
  CHECK(spent.message ==
        "job failed after 2 restarts; root cause: " + End(RoundEndKind::kWorkerFailure).Describe());
  for (RoundEndKind kind : {RoundEndKind::kStoreLost, RoundEndKind::kConfigError}) {
    AttemptDecision d = AfterRoundEnd(Outcome(AttemptOutcome::kStopped), End(kind), 0, 5);
    CHECK(d.next == NextStep::kExit);
    CHECK(d.exit_code == ExitCode::kFailure);
    CHECK(d.report == FailureReportKind::kNone);
  }
}

TEST_CASE("Multi-host: the exit barrier's outcome", "[agent][decision]") {
  CHECK(AfterExitBarrier(FinishOutcome::kPassed, 300s).exit_code == ExitCode::kSuccess);
  AttemptDecision timed_out = AfterExitBarrier(FinishOutcome::kTimedOut, 300s);
  CHECK(timed_out.exit_code == ExitCode::kSuccess);
  CHECK(timed_out.message ==
        "exit barrier: not every host finished within 300 s (--exit-barrier-timeout); this "
        "host's workers succeeded, exiting");
  // A short --exit-barrier-timeout is said as given, not rounded down to 0 s.
  CHECK(AfterExitBarrier(FinishOutcome::kTimedOut, 1500ms)
            .message.starts_with(
                "exit barrier: not every host finished within 1.5 s (--exit-barrier-timeout)"));
  AttemptDecision lost = AfterExitBarrier(FinishOutcome::kInterrupted, 300s);
  CHECK(lost.exit_code == ExitCode::kFailure);
  CHECK(lost.message == "error: lost the other hosts during the exit barrier");
}

}  // namespace
}  // namespace cpplaunch
