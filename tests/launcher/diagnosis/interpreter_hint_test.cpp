#include "launcher/diagnosis/interpreter_hint.h"

#include <signal.h>

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

const Clock::time_point kStart = Clock::time_point{} + 1000h;
const Interpreter kVenv{"python3", "/home/u/venv/bin/python3", false};
const std::string kTorchMissing =
    "Traceback (most recent call last):\n  File \"/t/train.py\", line 1, in <module>\n"
    "    import torch\nModuleNotFoundError: No module named 'torch'\n";

std::vector<FailureRecord> Failed(int n, WorkerExit exit = WorkerExit::Exited(1),
                                  Clock::duration after = 200ms) {
  std::vector<FailureRecord> records(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    records[i].local_rank = records[i].global_rank = i;
    records[i].exit = exit;
    records[i].time = kStart + after;
  }
  return records;
}

TEST_CASE("the same import error on every rank names the interpreter") {
  CHECK(InterpreterHint(Failed(2), 2, kStart, {kTorchMissing, kTorchMissing}, kVenv) ==
        "the workers failed at start-up with ModuleNotFoundError: No module named 'torch'; the "
        "interpreter was /home/u/venv/bin/python3 (python3 on PATH; set PYTHON_EXEC to choose "
        "one)");
  CHECK(InterpreterHint(Failed(1), 1, kStart, {kTorchMissing},
                        Interpreter{"/opt/py/bin/python", "/opt/py/bin/python", true})
            ->ends_with("the interpreter was /opt/py/bin/python (PYTHON_EXEC)"));
}

TEST_CASE("without logs, a quick exit 1 of every rank still names the interpreter") {
  CHECK(InterpreterHint(Failed(2), 2, kStart, {"", ""}, kVenv) ==
        "the workers failed at start-up (exit code 1); the interpreter was "
        "/home/u/venv/bin/python3 (python3 on PATH; set PYTHON_EXEC to choose one)");
  CHECK_FALSE(InterpreterHint(Failed(2, WorkerExit::Exited(3)), 2, kStart, {"", ""}, kVenv));
}

TEST_CASE("no hint for a real failure: one rank, different errors, late, or a signal") {
  CHECK_FALSE(InterpreterHint(Failed(1), 2, kStart, {kTorchMissing}, kVenv));  // one of two
  // A worker that is still running past the start-up window: no hint.
  CHECK_FALSE(InterpreterHint(Failed(2), 2, kStart, {kTorchMissing, "ValueError: x\n"}, kVenv));
  CHECK_FALSE(InterpreterHint(Failed(2), 2, kStart, {"ValueError: x\n", "ValueError: x\n"}, kVenv));
  CHECK_FALSE(InterpreterHint(Failed(2, WorkerExit::Exited(1), 30s), 2, kStart, {"", ""}, kVenv));
  CHECK_FALSE(
      InterpreterHint(Failed(2, WorkerExit::Signaled(SIGSEGV)), 2, kStart, {"", ""}, kVenv));
  auto late_victim = Failed(2);
  late_victim[1].killed_by_teardown = true;
  late_victim[1].time = kStart + 30s;
  CHECK_FALSE(InterpreterHint(late_victim, 2, kStart, {kTorchMissing, ""}, kVenv));
  auto all_victims = Failed(2);
  for (auto& r : all_victims) r.killed_by_teardown = true;
  CHECK_FALSE(InterpreterHint(all_victims, 2, kStart, {"", ""}, kVenv));
}

TEST_CASE("the workers the first import failure's teardown stopped do not hide the hint") {
  auto records = Failed(3);
  records[1].killed_by_teardown = true;  // stopped before it got to its own import
  records[1].exit = WorkerExit::Signaled(SIGTERM);
  CHECK(InterpreterHint(records, 3, kStart, {kTorchMissing, "", kTorchMissing}, kVenv) ==
        "the workers failed at start-up with ModuleNotFoundError: No module named 'torch'; the "
        "interpreter was /home/u/venv/bin/python3 (python3 on PATH; set PYTHON_EXEC to choose "
        "one)");
  CHECK(InterpreterHint(records, 3, kStart, {"", "", ""}, kVenv)
            ->starts_with("the workers failed at start-up (exit code 1)"));
}

TEST_CASE("ImportErrorLine finds the last import error line") {
  CHECK(ImportErrorLine(kTorchMissing) == "ModuleNotFoundError: No module named 'torch'");
  CHECK(ImportErrorLine("ImportError: cannot import name 'x'\n") ==
        "ImportError: cannot import name 'x'");
  CHECK(ImportErrorLine("nothing here\n").empty());
}

}  // namespace
}  // namespace cpplaunch
