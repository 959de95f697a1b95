#include "launcher/diagnosis/interpreter_hint.h"

#include <signal.h>

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

const Clock::time_point kStart = Clock::time_point{} + 1000h;
const Interpreter kVenv{"python3", "/home/u/venv/bin/python3", false, ""};
const std::vector<std::string> kTorch{"torch"};
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
  CHECK(InterpreterHint(Failed(2), 2, kStart, {kTorchMissing, kTorchMissing}, kVenv, kTorch) ==
        "the workers failed at start-up with ModuleNotFoundError: No module named 'torch'; the "
        "interpreter was /home/u/venv/bin/python3 (python3 on PATH; set PYTHON_EXEC to choose "
        "one)");
  CHECK(InterpreterHint(Failed(1), 1, kStart, {kTorchMissing},
                        Interpreter{"/opt/py/bin/python", "/opt/py/bin/python", true, ""}, kTorch)
            ->ends_with("the interpreter was /opt/py/bin/python (PYTHON_EXEC)"));
}

// Deliberately changed (issue 27): a quick exit 1 without words used to name the interpreter;
// it proves nothing, so only an exec failure does now.
TEST_CASE("without logs only an exec failure names the interpreter") {
  CHECK_FALSE(InterpreterHint(Failed(2), 2, kStart, {"", ""}, kVenv, kTorch));
  CHECK_FALSE(
      InterpreterHint(Failed(2, WorkerExit::Exited(3)), 2, kStart, {"", ""}, kVenv, kTorch));
  CHECK(InterpreterHint(Failed(2, WorkerExit::Exited(127)), 2, kStart, {"", ""},
                        Interpreter{"/opt/py", "", true, ""}, kTorch) ==
        "the workers could not start (exit code 127); the interpreter was /opt/py (not found on "
        "PATH) (PYTHON_EXEC)");
}

TEST_CASE("no hint when the workers say something else went wrong at start-up") {
  const std::vector<std::string> others{
      // A RuntimeError in the script (epoch 2, quickly).
      "Traceback (most recent call last):\n  File \"/t/train.py\", line 9\n"
      "RuntimeError: loss is nan\n",
      // A failing pytest run: the summary, nothing imported wrongly.
      "FAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed, 2 passed in 0.31s\n",
      // gloo's refused connect.
      "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
      "[127.0.0.1]:1935: Connection refused\n",
      // A full $TMPDIR.
      "OSError: [Errno 28] No space left on device: '/tmp/torchelastic_x/0/error.json'\n",
      // PyTorch 2.6 without libuv.
      "RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n",
      // The script's own module, not the interpreter's.
      "ModuleNotFoundError: No module named 'mymodel'\n",
      // pytest's report of a test module's import error, indented in its output.
      "E   ModuleNotFoundError: No module named 'torch'\n"};
  for (const std::string& text : others) {
    CAPTURE(text);
    CHECK_FALSE(InterpreterHint(Failed(2), 2, kStart, {text, text}, kVenv, kTorch));
  }
}

TEST_CASE("the -m module missing from the interpreter names it") {
  const std::string text = "/root/.pyenv/versions/3.11.7/bin/python3: No module named pytest\n";
  CHECK(InterpreterHint(Failed(2), 2, kStart, {text, text}, kVenv, {"torch", "pytest"}) ==
        "the workers failed at start-up with /root/.pyenv/versions/3.11.7/bin/python3: No module "
        "named pytest; the interpreter was /home/u/venv/bin/python3 (python3 on PATH; set "
        "PYTHON_EXEC to choose one)");
  CHECK_FALSE(InterpreterHint(Failed(2), 2, kStart, {text, text}, kVenv, kTorch));
}

TEST_CASE("an interpreter the launcher chose says why") {
  Interpreter chosen{"/usr/bin/python3", "/usr/bin/python3", false,
                     "python3 on PATH has no module 'torch'"};
  CHECK(InterpreterHint(Failed(1), 1, kStart, {kTorchMissing}, chosen, kTorch)
            ->ends_with("the interpreter was /usr/bin/python3 (python3 on PATH has no module "
                        "'torch'; set PYTHON_EXEC to choose one)"));
}

TEST_CASE("no hint for a real failure: one rank, different errors, late, or a signal") {
  CHECK_FALSE(InterpreterHint(Failed(1), 2, kStart, {kTorchMissing}, kVenv, kTorch));  // one of two
  // A worker that is still running past the start-up window: no hint.
  CHECK_FALSE(
      InterpreterHint(Failed(2), 2, kStart, {kTorchMissing, "ValueError: x\n"}, kVenv, kTorch));
  CHECK_FALSE(
      InterpreterHint(Failed(2), 2, kStart, {"ValueError: x\n", "ValueError: x\n"}, kVenv, kTorch));
  CHECK_FALSE(
      InterpreterHint(Failed(2, WorkerExit::Exited(1), 30s), 2, kStart, {"", ""}, kVenv, kTorch));
  CHECK_FALSE(InterpreterHint(Failed(2, WorkerExit::Signaled(SIGSEGV)), 2, kStart, {"", ""}, kVenv,
                              kTorch));
  auto late_victim = Failed(2);
  late_victim[1].killed_by_teardown = true;
  late_victim[1].time = kStart + 30s;
  CHECK_FALSE(InterpreterHint(late_victim, 2, kStart, {kTorchMissing, ""}, kVenv, kTorch));
  auto all_victims = Failed(2);
  for (auto& r : all_victims) r.killed_by_teardown = true;
  CHECK_FALSE(InterpreterHint(all_victims, 2, kStart, {"", ""}, kVenv, kTorch));
}

TEST_CASE("the workers the first import failure's teardown stopped do not hide the hint") {
  auto records = Failed(3);
  records[1].killed_by_teardown = true;  // stopped before it got to its own import
  records[1].exit = WorkerExit::Signaled(SIGTERM);
  CHECK(InterpreterHint(records, 3, kStart, {kTorchMissing, "", kTorchMissing}, kVenv, kTorch) ==
        "the workers failed at start-up with ModuleNotFoundError: No module named 'torch'; the "
        "interpreter was /home/u/venv/bin/python3 (python3 on PATH; set PYTHON_EXEC to choose "
        "one)");
  CHECK_FALSE(InterpreterHint(records, 3, kStart, {"", "", ""}, kVenv, kTorch));
}

TEST_CASE("ImportErrorLine finds the last import error line") {
  CHECK(ImportErrorLine(kTorchMissing) == "ModuleNotFoundError: No module named 'torch'");
  CHECK(ImportErrorLine("ImportError: cannot import name 'x'\n") ==
        "ImportError: cannot import name 'x'");
  CHECK(ImportErrorLine("nothing here\n").empty());
  CHECK(ImportErrorLine("/usr/bin/python3: No module named pytest\n") ==
        "/usr/bin/python3: No module named pytest");
  CHECK(ImportErrorLine("E   ModuleNotFoundError: No module named 'x'\n").empty());
}

TEST_CASE("NamesModule: the module or its submodules but not a longer name") {
  CHECK(NamesModule("ModuleNotFoundError: No module named 'torch'", "torch"));
  CHECK(NamesModule("ModuleNotFoundError: No module named 'torch.distributed'", "torch"));
  CHECK(NamesModule("ImportError: cannot import name 'x' from 'torch.nn' (/p)", "torch"));
  CHECK(NamesModule("/usr/bin/python3: No module named pytest", "pytest"));
  CHECK_FALSE(NamesModule("ModuleNotFoundError: No module named 'torchvision'", "torch"));
  CHECK_FALSE(NamesModule("/usr/bin/python3: No module named pytest_x", "pytest"));
}

}  // namespace
}  // namespace cpplaunch
