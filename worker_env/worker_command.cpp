#include "worker_env/worker_command.h"

#include "worker_env/arg_template.h"
#include "worker_env/env_names.h"

namespace cpplaunch {
namespace {

// An empty PYTHON_EXEC counts as unset: an empty argv[0] cannot be executed, and there is no
// sys.executable to stand in for it as torchrun has.
std::string PythonProgram(const EnvMap& agent_env, const CommandSpec& spec) {
  auto exec = Lookup(agent_env, env_names::kPythonExec);
  if (exec && !exec->empty()) return *exec;
  return spec.python.empty() ? std::string(kDefaultPython) : spec.python;
}

// What torchrun hands to its entrypoint before macro substitution.
std::vector<std::string> UnsubstitutedArgs(const CommandSpec& spec) {
  std::vector<std::string> args;
  if (!spec.no_python) {
    args.push_back("-u");
    if (spec.module) args.push_back("-m");
    args.push_back(spec.training_script);
  }
  args.insert(args.end(), spec.training_script_args.begin(), spec.training_script_args.end());
  return args;
}

}  // namespace

WorkerCommand BuildWorkerCommand(const EnvMap& agent_env, const CommandSpec& spec, int local_rank) {
  WorkerCommand command;
  command.argv.push_back(spec.no_python ? spec.training_script : PythonProgram(agent_env, spec));
  for (const std::string& arg : UnsubstitutedArgs(spec)) {
    command.argv.push_back(SubstituteLocalRank(arg, local_rank));
  }
  return command;
}

std::string EntrypointName(const CommandSpec& spec) {
  if (spec.no_python) return spec.training_script;
  // The scan runs over the list torchrun scans, "-u" and "-m" included, so a script name
  // starting with '-' is passed over as torchrun passes over it.
  for (const std::string& arg : UnsubstitutedArgs(spec)) {
    if (arg.empty() || arg[0] != '-') return arg;
  }
  return "";
}

}  // namespace cpplaunch
