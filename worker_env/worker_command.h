#pragma once
// The argv of one worker, as torchrun builds it. Pure.
//
//   default       [python, "-u", script, args...]
//   --module      [python, "-u", "-m", module, args...]
//   --no-python   [script, args...]
//
// python is PYTHON_EXEC from the agent's environment, else the spec's `python` (the interpreter
// the launcher chose, launcher/interpreter/), else "python3" (torchrun uses its own
// sys.executable; the spawner resolves "python3" on PATH like execvp). Everything
// after the program goes through SubstituteLocalRank, as torchrun's macro substitution
// does: in python mode that includes the script or module name, in --no-python mode the
// program itself is left as typed.

#include <string>
#include <vector>

#include "worker_env/env_map.h"

namespace cpplaunch {

struct CommandSpec {
  std::string training_script;  // script path, module name (module), or program (no_python)
  std::vector<std::string> training_script_args;
  bool module = false;
  bool no_python = false;
  std::string python;  // the interpreter chosen when PYTHON_EXEC is unset; "" = "python3"
};

struct WorkerCommand {
  std::vector<std::string> argv;  // argv[0] is the program to execvp
};

inline constexpr const char* kDefaultPython = "python3";

WorkerCommand BuildWorkerCommand(const EnvMap& agent_env, const CommandSpec& spec, int local_rank);

// The name torchrun shows in its failure title ("<name> FAILED") and logs: for python
// launches the first of [-u, -m, script, args...] that does not start with '-' (normally
// the script or module as typed, "" if none); for --no-python the program as typed.
std::string EntrypointName(const CommandSpec& spec);

}  // namespace cpplaunch
