#pragma once
// Which Python the workers run when PYTHON_EXEC is unset. torchrun runs them with the Python
// that runs torchrun, which has torch by construction; cpplaunch is not a Python program, so
// it keeps the first python3 on PATH unless that one is known to lack a module the job needs
// (torch; and the -m module), and then takes the first other python3 known to have them all,
// saying so in one line. Pure: the facts come from python_probe. Thread-safe.

#include <string>

namespace cpplaunch {

// What the launcher found out about one interpreter without starting it.
struct PythonFacts {
  enum class Modules { kAll, kMissing, kUnknown };
  std::string program;  // the file the workers would exec
  std::string shown;    // how a line names it: "/root/.pyenv/shims/python3 (pyenv 3.11.7)"
  Modules modules = Modules::kUnknown;  // kUnknown: not a layout we can read (then trusted)
  std::string missing;                  // with kMissing: the first module not found
};

struct PythonChoice {
  std::string program;  // the interpreter the workers run
  std::string note;     // the line said at start (without "cpplaunch: "), "" for none
  std::string origin;   // why, as the failure hints name it
};

// Whether another interpreter is looked for: only when the first python3 on PATH is known to
// lack a module.
bool LooksElsewhere(const PythonFacts& first);

// Whether `other` can stand in for `first`: known to have every module, and another file.
bool Fits(const PythonFacts& other);

// `other` chosen over `first`:
//   note   "the workers run /usr/bin/python3: the python3 on PATH, /root/.pyenv/shims/python3
//           (pyenv 3.11.7), has no module 'torch' (PYTHON_EXEC chooses another)"
//   origin "python3 on PATH has no module 'torch'"
PythonChoice OtherPython(const PythonFacts& first, const PythonFacts& other);

// The drop-in torchrun: the interpreter of the torchrun it shadows, without a line (torchrun's
// own behaviour); origin "the #! of /usr/bin/torchrun, which this torchrun stands in for".
PythonChoice ShadowedTorchrunPython(const std::string& interpreter, const std::string& torchrun);

}  // namespace cpplaunch
