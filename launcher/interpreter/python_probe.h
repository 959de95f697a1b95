#pragma once
// The filesystem half of the interpreter choice: what an interpreter is (a pyenv shim, a venv,
// an installation) and whether the modules a job needs are where it would look, read from its
// files without starting it: a few stat(2)s and reads of small files, well under a millisecond
// (bench: scripts/bench --only interpreter_choice). Blocking; never throws; thread-safe.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher/interpreter/interpreter_choice.h"
#include "launcher/interpreter/python_layout.h"

namespace cpplaunch {

struct ProbeInputs {
  std::vector<std::string> modules;          // top-level modules the job needs: "torch", ...
  SearchEnv search;                          // PYTHONPATH, HOME, sys.path[0]
  std::optional<std::string> pyenv_version;  // PYENV_VERSION
  std::filesystem::path pyenv_dir;           // where .python-version is looked for, upward
};

// Facts about `program` (an executable file, as execvp would find it). kUnknown when it is a
// script other than a pyenv shim, pyenv's "system", or a layout this does not recognise.
PythonFacts ProbePython(const std::filesystem::path& program, const ProbeInputs& inputs);

// The first `count` bytes of a file ("" when it cannot be read).
std::string ReadHead(const std::filesystem::path& file, std::size_t count);

}  // namespace cpplaunch
