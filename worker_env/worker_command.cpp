#include "worker_env/worker_command.h"

#include "worker_env/arg_template.h"
#include "worker_env/env_names.h"

namespace cpplaunch {
namespace {

std::string PythonProgram(const EnvMap& agent_env) {
  auto exec = Lookup(agent_env, env_names::kPythonExec);
  return exec && !exec->empty() ? *exec : std::string(kDefaultPython);
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
  command.argv.push_back(spec.no_python ? spec.training_script : PythonProgram(agent_env));
  for (const std::string& arg : UnsubstitutedArgs(spec)) {
    command.argv.push_back(SubstituteLocalRank(arg, local_rank));
  }
  return command;
}

std::string EntrypointName(const CommandSpec& spec) {
  if (spec.no_python) return spec.training_script;
  for (const std::string& arg : UnsubstitutedArgs(spec)) {
    if (arg.empty() || arg[0] != '-') return arg;
  }
  return "";
}

}  // namespace cpplaunch
