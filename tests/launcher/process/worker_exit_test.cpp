#include "launcher/process/worker_exit.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <csignal>

namespace cpplaunch {
namespace {

// Wait statuses as the kernel encodes them (W_EXITCODE in glibc's <sys/wait.h>).
constexpr int ExitedStatus(int code) { return code << 8; }
constexpr int SignaledStatus(int signo, bool core) { return signo | (core ? 0x80 : 0); }

TEST_CASE("an exit status: ok only for code 0; torchrun and shell codes are the code") {
  WorkerExit zero = WorkerExit::FromWaitStatus(ExitedStatus(0));
  CHECK(zero.ok());
  CHECK(zero == WorkerExit::Exited(0));
  WorkerExit three = WorkerExit::FromWaitStatus(ExitedStatus(3));
  CHECK_FALSE(three.ok());
  CHECK_FALSE(three.signaled());
  CHECK(three.code() == 3);
  CHECK(three.torch_code() == 3);
  CHECK(three.shell_code() == 3);
  CHECK(three.describe() == "exited with code 3");
}

TEST_CASE("a death by signal: torchrun's -signo, a shell's 128+signo, the core bit ignored") {
  for (bool core : {false, true}) {
    WorkerExit segv = WorkerExit::FromWaitStatus(SignaledStatus(SIGSEGV, core));
    CHECK(segv.signaled());
    CHECK_FALSE(segv.ok());
    CHECK(segv.signal() == SIGSEGV);
    CHECK(segv.torch_code() == -SIGSEGV);
    CHECK(segv.shell_code() == 128 + SIGSEGV);
    CHECK(segv == WorkerExit::Signaled(SIGSEGV));
  }
  CHECK(WorkerExit::Signaled(SIGKILL).describe().find("SIGKILL") != std::string::npos);
}

TEST_CASE("a core dump is kept beside the signal and said in the description") {
  WorkerExit dumped = WorkerExit::FromWaitStatus(SignaledStatus(SIGABRT, true));
  CHECK(dumped.core_dumped());
  CHECK(dumped == WorkerExit::Dumped(SIGABRT));
  CHECK(dumped.describe() == "killed by SIGABRT (core dumped)");
  CHECK_FALSE(WorkerExit::FromWaitStatus(SignaledStatus(SIGABRT, false)).core_dumped());
  CHECK_FALSE(WorkerExit::FromWaitStatus(ExitedStatus(0x80)).core_dumped());
}

TEST_CASE("SignalName names known signals and numbers the rest") {
  CHECK(SignalName(SIGTERM) == "SIGTERM");
  CHECK(SignalName(SIGUSR1) == "SIGUSR1");
  CHECK(SignalName(42) == "signal 42");
}

}  // namespace
}  // namespace cpplaunch
