#pragma once
// The workers' Python when PYTHON_EXEC is unset, chosen once before the agent starts:
//   * as the drop-in `torchrun` (argv[0] named torchrun): the interpreter of the torchrun it
//     shadows (the next `torchrun` on PATH that is not this program, else /usr/bin/torchrun),
//     read from its #! line, as that torchrun would run its workers with its own Python;
//   * otherwise the first python3 on PATH, unless it is known to lack torch (or the -m
//     module), and then the first other python3 on PATH, or /usr/bin/python3, that has them
//     (interpreter_choice.h).
// nullopt keeps "python3" from PATH. Blocking filesystem reads (python_probe.h), well under a
// millisecond; never throws.

#include <filesystem>
#include <optional>
#include <string>

#include "launcher/interpreter/interpreter_choice.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

struct PythonQuery {
  std::string argv0;       // how the launcher was called
  bool no_python = false;  // --no-python: no interpreter to choose
  bool module = false;     // -m: `script` is a module name
  std::string script;      // the script's path or the module's name
  std::filesystem::path cwd;
  std::filesystem::path self;  // this program's file (/proc/self/exe)
  // Where the system's python3 and torchrun are looked for last (python3-torch's).
  std::filesystem::path system_bin = "/usr/bin";
};

std::optional<PythonChoice> ChooseWorkerPython(const PythonQuery& query, const EnvMap& env);

// The torchrun a drop-in called `self` stands in for: the first executable `torchrun` in
// `path_value` that is not `self`, else `system_bin`/torchrun; nullopt when there is none.
std::optional<std::string> ShadowedTorchrun(const char* path_value,
                                            const std::filesystem::path& self,
                                            const std::filesystem::path& system_bin);

}  // namespace cpplaunch
