#pragma once
// Which Python ran the workers. With a python3 first on PATH that lacks torch (a venv, pyenv),
// every rank fails at once with the same import error and torchrun's summary says only
// "binary: python3"; cpplaunch names the interpreter PATH led to, and says so when every worker
// failed at start-up alike. Pure; thread-safe.

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
};

// How soon after the attempt's start a failure counts as "at start-up".
inline constexpr std::chrono::seconds kStartupWindow{10};

// The import error line of a worker's output ("ModuleNotFoundError: No module named 'torch'"):
// the last line starting with ModuleNotFoundError: or ImportError:, or "".
std::string ImportErrorLine(const std::string& text);

// The line (without "cpplaunch: ") when every one of the `local_world_size` workers ended
// within kStartupWindow of `started`: those that failed by themselves (records not
// killed_by_teardown) with the same exit code, the others stopped by the teardown that began
// (while they were still starting); and the texts of the failed ones (error files and
// stderr.log tails, "" when none was kept; `texts[i]` belongs to `records[i]`) either all name
// the same import error or are all empty (then the exit code must be 1, Python's for an
// uncaught exception):
//   "the workers failed at start-up with ModuleNotFoundError: No module named 'torch'; the
//    interpreter was /home/u/venv/bin/python3 (python3 on PATH; set PYTHON_EXEC to choose one)"
std::optional<std::string> InterpreterHint(const std::vector<FailureRecord>& records,
                                           std::size_t local_world_size,
                                           std::chrono::system_clock::time_point started,
                                           const std::vector<std::string>& texts,
                                           const Interpreter& interpreter);

}  // namespace cpplaunch
