// --exit-code: torchrun's 1, or the root-cause worker's own code.

#include "launcher/report/job_exit_status.h"

#include <catch2/catch.hpp>
#include <csignal>

namespace cpplaunch {
namespace {

WorkerFailure Failure(int rank, WorkerExit exit, int at, bool teardown = false) {
  FailureRecord r;
  r.global_rank = r.local_rank = rank;
  r.exit = exit;
  r.time = std::chrono::system_clock::time_point(std::chrono::seconds(at));
  r.killed_by_teardown = teardown;
  return {r, std::nullopt};
}

TEST_CASE("JobExitStatus: torchrun mode is the decision", "[agent][job_exit_status]") {
  const std::vector<WorkerFailure> failures = {Failure(0, WorkerExit::Exited(5), 1)};
  CHECK(JobExitStatus(ExitCodeMode::kTorchrun, ExitCode::kFailure, failures) == 1);
  CHECK(JobExitStatus(ExitCodeMode::kTorchrun, ExitCode::kSuccess, {}) == 0);
}

TEST_CASE("JobExitStatus: worker mode returns the root cause's code", "[agent][job_exit_status]") {
  // Rank 1 failed first with pytest's 5; rank 0 was stopped by the teardown afterwards.
  const std::vector<WorkerFailure> failures = {Failure(0, WorkerExit::Signaled(SIGTERM), 2, true),
                                               Failure(1, WorkerExit::Exited(5), 1)};
  CHECK(JobExitStatus(ExitCodeMode::kWorker, ExitCode::kFailure, failures) == 5);
  CHECK(JobExitStatus(ExitCodeMode::kWorker, ExitCode::kFailure,
                      {Failure(2, WorkerExit::Signaled(SIGSEGV), 1)}) == 128 + SIGSEGV);
}

TEST_CASE("JobExitStatus: worker mode keeps 1 without a local root cause",
          "[agent][job_exit_status]") {
  // Every local worker was a victim (the root cause was on another host, or a signal).
  CHECK(JobExitStatus(ExitCodeMode::kWorker, ExitCode::kFailure,
                      {Failure(0, WorkerExit::Signaled(SIGTERM), 1, true)}) == 1);
  CHECK(JobExitStatus(ExitCodeMode::kWorker, ExitCode::kFailure, {}) == 1);
  CHECK(JobExitStatus(ExitCodeMode::kWorker, ExitCode::kUsage, {}) == 2);
  CHECK(JobExitStatus(ExitCodeMode::kWorker, ExitCode::kSuccess, {}) == 0);
}

}  // namespace
}  // namespace cpplaunch
