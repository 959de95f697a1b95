#pragma once
// Reads the thread dumps Python's faulthandler writes to stderr on a fatal signal
// (PYTHONFAULTHANDLER=1), and says where a rank was stuck. Pure.
//
//   Fatal Python error: Aborted
//
//   Thread 0x00007f3b2a7fc640 (most recent call first):
//     File "/usr/lib/python3.11/threading.py", line 320 in wait
//
//   Current thread 0x00007f3b3d0a3740 (most recent call first):
//     File ".../torch/distributed/distributed_c10d.py", line 1536 in all_reduce
//     File "train.py", line 42 in <module>

#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

struct PythonFrame {
  std::string file;
  int line = 0;
  std::string function;
};

struct PythonThread {
  std::string header;               // "Current thread 0x... (most recent call first):"
  std::vector<PythonFrame> frames;  // most recent call first
  // faulthandler's "<no Python frame>": the thread ran no Python code. For the main thread that
  // means the script had returned: it was stuck while Python exits (a destructor, an atexit
  // callback written in C), as PyTorch 1.13's gloo sometimes is.
  bool no_python_frame = false;
};

// The threads of the last dump in `text` (a worker's stderr); empty when there is none.
std::vector<PythonThread> ParseFaulthandlerDump(std::string_view text);

inline constexpr std::string_view kAfterLastLine =
    "after the script's last line (no Python frame: stuck while Python exits)";

// The thread running the script: the one whose outermost frame is "<module>", else the current
// thread, else the first. Requires a non-empty vector.
const PythonThread& MainThread(const std::vector<PythonThread>& threads);

// "all_reduce at train.py:42": the innermost frame's function, at the innermost frame of the
// user's code (a file outside Python's library and installed packages; the file's base name).
// kAfterLastLine for a thread with "<no Python frame>"; "" for one with no frames seen.
std::string WhereStuck(const PythonThread& thread);

// The frames as faulthandler prints them, one per line, each line starting with `indent`
// ("<no Python frame>" for a thread that ran none).
std::string FormatFrames(const PythonThread& thread, std::string_view indent);

}  // namespace cpplaunch
