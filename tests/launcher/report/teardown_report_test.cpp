#include "launcher/report/teardown_report.h"

#include <signal.h>

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

ExitRecord Exit(int id, WorkerExit exit, ExitRole role) {
  return ExitRecord{WorkerExitEvent{id, 4240 + id, exit, {}}, role};
}

TEST_CASE("the failure that starts a teardown is told at once, with when SIGKILL follows",
          "[agent][teardown]") {
  const WorkerExitEvent root{1, 4242, WorkerExit::Exited(3), {}};
  CHECK(FailureTeardownLine(root, 4, 3, SIGTERM, 30s) ==
        "worker rank 5 (local rank 1, pid 4242) failed: " + WorkerExit::Exited(3).describe() +
            "; stopping the other 3 workers: SIGTERM now, SIGKILL in 30 s to any still running "
            "(--shutdown-timeout)");
  CHECK(FailureTeardownLine(root, 0, 1, SIGTERM, 1500ms)
            .find("the other 1 worker: SIGTERM now, "
                  "SIGKILL in 1.5 s") != std::string::npos);
  // Nobody left to stop: only the failure.
  CHECK(FailureTeardownLine(root, 0, 0, SIGTERM, 30s) ==
        "worker rank 1 (local rank 1, pid 4242) failed: " + WorkerExit::Exited(3).describe());
}

TEST_CASE("the first Ctrl-C says that a second one kills at once", "[agent][teardown]") {
  CHECK(SignalTeardownLine(SIGINT, 30s) ==
        "received SIGINT; forwarding it to the workers; workers still running after 30 s get "
        "SIGKILL (--shutdown-timeout); press Ctrl-C again to SIGKILL them now");
  CHECK(SignalTeardownLine(SIGTERM, 5s).ends_with("; a second signal SIGKILLs them now"));
}

TEST_CASE("the workers that needed SIGKILL are named after the teardown", "[agent][teardown]") {
  AttemptResult result;
  CHECK_FALSE(SigkillLine(result, SIGTERM, 30s));
  result.exits = {Exit(0, WorkerExit::Exited(3), ExitRole::kFailed),
                  Exit(1, WorkerExit::Signaled(SIGTERM), ExitRole::kStopped),
                  Exit(2, WorkerExit::Signaled(SIGKILL), ExitRole::kStopped),
                  Exit(3, WorkerExit::Signaled(SIGKILL), ExitRole::kStopped)};
  CHECK(SigkilledRanks(result) == "2, 3");
  CHECK(SigkillLine(result, SIGTERM, 30s) ==
        "local ranks 2, 3 did not stop within 30 s of SIGTERM and were SIGKILLed");
  result.exits.pop_back();
  CHECK(SigkillLine(result, SIGTERM, 30s) ==
        "local rank 2 did not stop within 30 s of SIGTERM and was SIGKILLed");
  result.killed_on_second_signal = true;
  CHECK(SigkillLine(result, SIGINT, 30s) == "local rank 2 SIGKILLed at the second signal");
}

TEST_CASE("a worker that failed by dying of SIGKILL itself is not a teardown victim",
          "[agent][teardown]") {
  AttemptResult result;
  result.exits = {Exit(0, WorkerExit::Signaled(SIGKILL), ExitRole::kFailed)};  // the OOM killer
  CHECK_FALSE(SigkillLine(result, SIGTERM, 30s));
}

}  // namespace
}  // namespace cpplaunch
