#include "launcher/report/failure_report.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <ctime>

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

constexpr long long kNoon = 1714564800;  // 2024-05-01 12:00:00 UTC

system_clock::time_point At(long long unix_seconds, int millis = 0) {
  return system_clock::time_point(seconds(unix_seconds)) + milliseconds(millis);
}

// The box shows local time: pin the zone so the expected text is fixed.
void UseUtc() {
  ::setenv("TZ", "UTC0", 1);
  ::tzset();
}

WorkerFailure Failure(int rank, WorkerExit exit, system_clock::time_point time, int pid,
                      bool teardown = false) {
  FailureRecord r;
  r.local_rank = rank;
  r.global_rank = rank;
  r.pid = pid;
  r.exit = exit;
  r.time = time;
  r.host = "node1.example.com";
  r.error_file = "/tmp/x/attempt_0/" + std::to_string(rank) + "/error.json";
  r.killed_by_teardown = teardown;
  return {r, std::nullopt};
}

const std::string kHeader = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n";

}  // namespace

TEST_CASE("Failure summary for one worker exiting with a code", "[launcher][failure_report]") {
  UseUtc();
  const std::string text =
      FormatFailureSummary("train.py", {Failure(0, WorkerExit::Exited(3), At(kNoon + 3), 4242)});
  const std::string eq(60, '=');
  const std::string dash(60, '-');
  CHECK(text == kHeader + eq + "\n" + "train.py FAILED\n" + dash + "\n" +
                    "Failures:\n"
                    "  <NO_OTHER_FAILURES>\n" +
                    dash + "\n" +
                    "Root Cause (first observed failure):\n"
                    "[0]:\n"
                    "  time      : 2024-05-01_12:00:03\n"
                    "  host      : node1.example.com\n"
                    "  rank      : 0 (local_rank: 0)\n"
                    "  exitcode  : 3 (pid: 4242)\n"
                    "  error_file: <N/A>\n"
                    "  traceback : To enable traceback see: "
                    "https://pytorch.org/docs/stable/elastic/errors.html\n" +
                    eq + "\n");
}

TEST_CASE("Failure summary for a worker killed by a signal", "[launcher][failure_report]") {
  UseUtc();
  const std::string text = FormatFailureSummary(
      "trainer", {Failure(1, WorkerExit::Signaled(SIGKILL), At(kNoon, 900), 77)});
  // Widest line: "  traceback : Signal 9 (SIGKILL) received by PID 77" (51 code points).
  const std::string eq(51, '=');
  const std::string dash(51, '-');
  CHECK(text == kHeader + eq + "\ntrainer FAILED\n" + dash +
                    "\nFailures:\n  <NO_OTHER_FAILURES>\n" + dash +
                    "\nRoot Cause (first observed failure):\n"
                    "[0]:\n"
                    "  time      : 2024-05-01_12:00:00\n"
                    "  host      : node1.example.com\n"
                    "  rank      : 1 (local_rank: 1)\n"
                    "  exitcode  : -9 (pid: 77) SIGKILL\n"
                    "  error_file: <N/A>\n"
                    "  traceback : Signal 9 (SIGKILL) received by PID 77\n" +
                    eq + "\n");
}

TEST_CASE("Failure summary shows the traceback of an @record error file, indented",
          "[launcher][failure_report]") {
  UseUtc();
  WorkerFailure f = Failure(0, WorkerExit::Exited(1), At(kNoon + 9), 4242);
  f.error = ParseWorkerError(
      R"({"message": {"message": "ValueError: bad", "extraInfo": {"py_callstack": "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\nValueError: bad\n", "timestamp": "1714564801"}}})");
  const std::string text = FormatFailureSummary("t.py", {f});
  CHECK(text.find("  time      : 2024-05-01_12:00:01\n") != std::string::npos);
  CHECK(text.find("  error_file: /tmp/x/attempt_0/0/error.json\n") != std::string::npos);
  CHECK(text.find("  exitcode  : 1 (pid: 4242)\n") != std::string::npos);
  CHECK(text.find("  traceback : Traceback (most recent call last):\n"
                  "    File \"t.py\", line 3, in <module>\n"
                  "  ValueError: bad\n" +
                  std::string(48, '=') + "\n") != std::string::npos);
}

TEST_CASE("Failure summary uses the message of a string-shaped error file",
          "[launcher][failure_report]") {
  UseUtc();
  WorkerFailure f = Failure(0, WorkerExit::Exited(2), At(kNoon + 9), 10);
  f.error = ParseWorkerError(R"({"message": "line one\nline two", "timestamp": 1714564805})");
  const std::string text = FormatFailureSummary("x", {f});
  CHECK(text.find("  time      : 2024-05-01_12:00:05\n") != std::string::npos);
  CHECK(text.find("  traceback : line one\n  line two\n") != std::string::npos);
}

TEST_CASE("Failure summary picks the earliest own failure as root cause, never a teardown victim",
          "[launcher][failure_report]") {
  UseUtc();
  WorkerFailure late = Failure(0, WorkerExit::Exited(1), At(kNoon + 5), 100);
  WorkerFailure early_by_file = Failure(1, WorkerExit::Exited(1), At(kNoon + 6), 101);
  early_by_file.error = ParseWorkerError(R"({"message": "boom", "timestamp": 1714564802})");
  WorkerFailure victim = Failure(2, WorkerExit::Signaled(SIGTERM), At(kNoon + 1), 102, true);
  const std::string text = FormatFailureSummary("train.py", {victim, late, early_by_file});
  const std::string eq(60, '=');
  const std::string dash(60, '-');
  CHECK(text == kHeader + eq + "\ntrain.py FAILED\n" + dash +
                    "\nFailures:\n"
                    "[0]:\n"
                    "  time      : 2024-05-01_12:00:05\n"
                    "  host      : node1.example.com\n"
                    "  rank      : 0 (local_rank: 0)\n"
                    "  exitcode  : 1 (pid: 100)\n"
                    "  error_file: <N/A>\n"
                    "  traceback : To enable traceback see: "
                    "https://pytorch.org/docs/stable/elastic/errors.html\n"
                    "[stopped by cpplaunch after the root cause]: rank 2 (pid 102) SIGTERM\n" +
                    dash +
                    "\nRoot Cause (first observed failure):\n"
                    "[1]:\n"
                    "  time      : 2024-05-01_12:00:02\n"
                    "  host      : node1.example.com\n"
                    "  rank      : 1 (local_rank: 1)\n"
                    "  exitcode  : 1 (pid: 101)\n"
                    "  error_file: /tmp/x/attempt_0/1/error.json\n"
                    "  traceback : boom\n" +
                    eq + "\n");
}

TEST_CASE("Failure summary puts every teardown victim on one line", "[launcher][failure_report]") {
  UseUtc();
  std::vector<WorkerFailure> f = {Failure(0, WorkerExit::Exited(3), At(kNoon), 100)};
  for (int rank = 1; rank < 4; ++rank) {
    f.push_back(Failure(rank, WorkerExit::Signaled(rank == 3 ? SIGKILL : SIGTERM), At(kNoon + 1),
                        100 + rank, true));
  }
  const std::string text = FormatFailureSummary("train.py", f);
  CHECK(text.find("Failures:\n[stopped by cpplaunch after the root cause]: rank 1 (pid 101) "
                  "SIGTERM, rank 2 (pid 102) SIGTERM, rank 3 (pid 103) SIGKILL\n---") !=
        std::string::npos);
  // Four workers: 16 lines where the seven-line entries made 37.
  CHECK(std::count(text.begin(), text.end(), '\n') == 16);
}

TEST_CASE("RootCauseIndex uses sub-second detection times and breaks ties by rank",
          "[launcher][failure_report]") {
  std::vector<WorkerFailure> f = {Failure(1, WorkerExit::Exited(1), At(kNoon, 500), 1),
                                  Failure(3, WorkerExit::Exited(1), At(kNoon, 200), 3),
                                  Failure(2, WorkerExit::Exited(1), At(kNoon, 200), 2)};
  CHECK(RootCauseIndex(f) == 2);
  f[2].record.killed_by_teardown = true;
  CHECK(RootCauseIndex(f) == 1);
  for (auto& each : f) each.record.killed_by_teardown = true;
  CHECK(RootCauseIndex(f) == 2);
}

TEST_CASE("FailedLogLine matches torchrun's grep-able wording", "[launcher][failure_report]") {
  FailureRecord r = Failure(3, WorkerExit::Signaled(SIGSEGV), At(kNoon), 999).record;
  r.local_rank = 1;
  CHECK(FailedLogLine(r, "/usr/bin/python3") ==
        "failed (exitcode: -11) local_rank: 1 (pid: 999) of binary: /usr/bin/python3");
}

TEST_CASE("Agent error file copies the worker's JSON and adds errorCode",
          "[launcher][failure_report]") {
  WorkerFailure f = Failure(0, WorkerExit::Signaled(SIGSEGV), At(kNoon), 5);
  f.error = ParseWorkerError(
      R"({"message": {"message": "E", "extraInfo": {"py_callstack": "tb", "timestamp": "1"}}, "other": 1})");
  const auto doc = AgentErrorDocument(f, "train.py", "summary");
  CHECK(
      doc ==
      nlohmann::json::parse(
          R"({"message": {"message": "E", "extraInfo": {"py_callstack": "tb", "timestamp": "1"}, "errorCode": -11}, "other": 1})"));
}

TEST_CASE("Agent error file keeps a string-shaped worker JSON as it is",
          "[launcher][failure_report]") {
  WorkerFailure f = Failure(0, WorkerExit::Exited(1), At(kNoon), 5);
  f.error = ParseWorkerError(R"({"message": "m", "timestamp": 3})");
  CHECK(AgentErrorDocument(f, "train.py", "s") ==
        nlohmann::json::parse(R"({"message": "m", "timestamp": 3})"));
}

TEST_CASE("Agent error file is synthesized when the worker wrote none",
          "[launcher][failure_report]") {
  WorkerFailure f = Failure(2, WorkerExit::Exited(3), At(kNoon, 700), 5);
  f.record.local_rank = 0;
  const auto doc = AgentErrorDocument(f, "train.py", "THE BOX");
  CHECK(doc == nlohmann::json::parse(R"({"message": {
      "message": "ChildFailedError: train.py FAILED (rank 2, local_rank 0): exited with code 3",
      "extraInfo": {"py_callstack": "THE BOX", "timestamp": "1714564800"},
      "errorCode": 3}})"));
  // What the agent writes must parse back through the worker-file reader.
  const WorkerError back = ParseWorkerError(doc.dump());
  CHECK(back.traceback == "THE BOX");
  CHECK(back.timestamp == At(kNoon));
}

TEST_CASE("Failure summary: a reason line only for a record with one",
          "[launcher][failure_report]") {
  UseUtc();
  WorkerFailure oom = Failure(0, WorkerExit::Signaled(SIGKILL), At(kNoon), 9);
  oom.record.reason = "killed by the kernel's OOM killer (memory limit 64.0 MiB, peak 64.0 MiB)";
  const std::string text = FormatFailureSummary(
      "train.py", {oom, Failure(1, WorkerExit::Signaled(SIGTERM), At(kNoon + 1), 10, true)});
  CHECK(text.find("  exitcode  : -9 (pid: 9) SIGKILL\n"
                  "  reason    : killed by the kernel's OOM killer (memory limit 64.0 MiB, peak "
                  "64.0 MiB)\n"
                  "  error_file: <N/A>\n") != std::string::npos);
  CHECK(text.find("reason") == text.rfind("reason"));  // rank 1 has none
}

}  // namespace cpplaunch
