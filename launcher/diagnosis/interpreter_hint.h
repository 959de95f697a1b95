#pragma once
// Which Python ran the workers. With a python3 that lacks torch (a venv, pyenv, a PYTHON_EXEC),
// every rank fails at once with the same import error and torchrun's summary says only
// "binary: python3"; cpplaunch names the interpreter, but only on evidence that it is the
// cause: every worker failed at start-up alike, and either they all name the same import error
// of a module the job needs (torch, the -m module), or none could be executed (126/127). A
// quick exit 1 alone proves nothing (a RuntimeError, a failing test, a full $TMPDIR, a refused
// connect all look the same) and gets no hint. Pure; thread-safe.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "launcher/report/failure_report.h"

namespace cpplaunch {

struct Interpreter {
  std::string program;   // as the workers' argv[0] names it: "python3", or PYTHON_EXEC
  std::string resolved;  // the file execvp runs for it ("" when none was found)
  bool from_python_exec = false;
  std::string origin;  // why the launcher chose it (launcher/interpreter/); "" = python3 on PATH
};

// How soon after the attempt's start a failure counts as "at start-up".
inline constexpr std::chrono::seconds kStartupWindow{10};

// The import error line of a worker's output: the last line starting with
// "ModuleNotFoundError: " or "ImportError: ", or Python's own for `-m` ("/usr/bin/python3: No
// module named pytest"), or "".
std::string ImportErrorLine(const std::string& text);

// Whether an import error line is about `module` or one of its submodules ("torch" in
// "No module named 'torch.distributed'", "ImportError: libtorch_cpu.so: ..." is not).
bool NamesModule(const std::string& line, const std::string& module);

// The line (without "cpplaunch: ") when every one of the `local_world_size` workers ended
// within kStartupWindow of `started`: those that failed by themselves (records not
// killed_by_teardown) with the same exit code, the others stopped by the teardown that began
// (while they were still starting); and either the texts of the failed ones (error files and
// stderr.log tails, "" when none was kept; `texts[i]` belongs to `records[i]`) all name the
// same import error of one of `job_modules`:
//   "the workers failed at start-up with ModuleNotFoundError: No module named 'torch'; the
//    interpreter was /home/u/venv/bin/python3 (python3 on PATH; set PYTHON_EXEC to choose one)"
// or the workers could not be executed (exit 126 or 127, whatever the texts):
//   "the workers could not start (exit code 127); the interpreter was /opt/py (PYTHON_EXEC)"
std::optional<std::string> InterpreterHint(const std::vector<FailureRecord>& records,
                                           std::size_t local_world_size,
                                           std::chrono::system_clock::time_point started,
                                           const std::vector<std::string>& texts,
                                           const Interpreter& interpreter,
                                           const std::vector<std::string>& job_modules);

}  // namespace cpplaunch
