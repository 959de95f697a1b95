// The plain words for a worker's end: OOM, outside signals, crashes, exec failures, D state.

#include "launcher/diagnosis/exit_explanation.h"

#include <catch2/catch.hpp>
#include <csignal>

namespace cpplaunch {
namespace {

ExitFacts Facts(WorkerExit exit) {
  ExitFacts facts;
  facts.exit = exit;
  facts.program = "python3";
  return facts;
}

TEST_CASE("ExplainExit: an OOM kill with the cgroup's limit and peak",
          "[agent][exit_explanation]") {
  ExitFacts facts = Facts(WorkerExit::Signaled(SIGKILL));
  facts.oom_counter_read = true;
  facts.oom = OomKill{64ull << 20, (64ull << 20) - 4096};
  CHECK(ExplainExit(facts) ==
        "killed by the kernel's OOM killer (memory limit 64.0 MiB, peak 64.0 MiB)");
  facts.oom = OomKill{std::nullopt, std::nullopt};
  CHECK(ExplainExit(facts) ==
        "killed by the kernel's OOM killer (no memory limit: the host ran out of memory)");
}

TEST_CASE("ExplainExit: SIGKILL from outside, told from OOM only with a counter",
          "[agent][exit_explanation]") {
  ExitFacts facts = Facts(WorkerExit::Signaled(SIGKILL));
  facts.oom_counter_read = true;
  CHECK(ExplainExit(facts) ==
        "killed by SIGKILL from outside the job (not sent by cpplaunch; the memory cgroup counts "
        "no OOM kill)");
  facts.oom_counter_read = false;
  CHECK(ExplainExit(facts).find("from outside the job, or by the kernel's OOM killer") !=
        std::string::npos);
  facts.sent_by_cpplaunch = true;  // the teardown's SIGKILL
  CHECK(ExplainExit(facts).empty());
}

TEST_CASE("ExplainExit: other signals from outside and crashes", "[agent][exit_explanation]") {
  CHECK(ExplainExit(Facts(WorkerExit::Signaled(SIGTERM))) ==
        "killed by SIGTERM from outside the job (not sent by cpplaunch)");
  CHECK(ExplainExit(Facts(WorkerExit::Dumped(SIGSEGV))) == "crashed with SIGSEGV (core dumped)");
  CHECK(ExplainExit(Facts(WorkerExit::Signaled(SIGABRT))) == "crashed with SIGABRT (no core dump)");
  CHECK(ExplainExit(Facts(WorkerExit::Dumped(SIGQUIT))) ==
        "killed by SIGQUIT from outside the job (not sent by cpplaunch) (core dumped)");
  ExitFacts stopped = Facts(WorkerExit::Signaled(SIGTERM));
  stopped.sent_by_cpplaunch = true;
  CHECK(ExplainExit(stopped).empty());
}

TEST_CASE("ExplainExit: 126 and 127 say what could not be run and why",
          "[agent][exit_explanation]") {
  ExitFacts facts = Facts(WorkerExit::Exited(127));
  facts.program = "/opt/missing";
  CHECK(ExplainExit(facts).empty());  // nothing checked: nothing said
  facts.program_check = ProgramCheck::kNotFound;
  CHECK(ExplainExit(facts) ==
        "could not run '/opt/missing': not found (no such file, or not on PATH)");
  facts.exit = WorkerExit::Exited(126);
  facts.program_check = ProgramCheck::kNotExecutable;
  CHECK(ExplainExit(facts) ==
        "could not run '/opt/missing': it is not an executable file (permission denied)");
  facts.program_check = ProgramCheck::kRunnable;
  CHECK(ExplainExit(facts) ==
        "'/opt/missing' is executable: the worker itself exited 126, or its #! interpreter is "
        "missing");
  CHECK(ExplainExit(Facts(WorkerExit::Exited(3))).empty());
}

TEST_CASE("DescribeUnkillable: D state with its wait channel", "[agent][exit_explanation]") {
  CHECK(DescribeUnkillable(2, 4242, 'D', "nfs_wait_on_request") ==
        "worker local rank 2 (pid 4242) is in uninterruptible sleep (D state) in the kernel at "
        "nfs_wait_on_request and did not die after SIGKILL; abandoning it (it ends when the "
        "kernel lets go: a hung device or network file system?)");
  CHECK(DescribeUnkillable(0, 7, 'D', "").find("(D state) and did not die") != std::string::npos);
  CHECK(DescribeUnkillable(0, 7, '\0', "").find("(pid 7) did not die") != std::string::npos);
}

TEST_CASE("IsCrashSignal", "[agent][exit_explanation]") {
  CHECK(IsCrashSignal(SIGSEGV));
  CHECK(IsCrashSignal(SIGABRT));
  CHECK_FALSE(IsCrashSignal(SIGKILL));
  CHECK_FALSE(IsCrashSignal(SIGTERM));
}

}  // namespace
}  // namespace cpplaunch
