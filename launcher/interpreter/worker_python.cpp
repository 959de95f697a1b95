#include "launcher/interpreter/worker_python.h"

#include <set>

#include "base/executable_search.h"
#include "launcher/interpreter/python_probe.h"
#include "launcher/interpreter/shebang.h"
#include "worker_env/env_names.h"

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

fs::path Canonical(const fs::path& p) {
  std::error_code ec;
  fs::path real = fs::canonical(p, ec);
  return ec ? p : real;
}

// One interpreter as Python sees it: a venv's bin/python3 links to the system's binary but is
// another environment, so only the directory is resolved (/bin -> /usr/bin), not the file.
fs::path Identity(const fs::path& program) {
  return Canonical(program.parent_path()) / program.filename();
}

bool Executable(const std::string& file) { return FindExecutable(file, nullptr).found.has_value(); }

std::optional<PythonChoice> DropInChoice(const PythonQuery& query, const char* path) {
  const auto torchrun = ShadowedTorchrun(path, query.self, query.system_bin);
  if (!torchrun) return std::nullopt;
  const auto interpreter = ShebangInterpreter(ReadHead(*torchrun, 1024));
  // A `#!/usr/bin/env python3` torchrun runs what PATH gives, as cpplaunch's own choice does.
  if (!interpreter || !interpreter->starts_with("/") || !Executable(*interpreter)) {
    return std::nullopt;
  }
  return ShadowedTorchrunPython(*interpreter, *torchrun);
}

ProbeInputs Inputs(const PythonQuery& query, const EnvMap& env) {
  ProbeInputs in;
  in.modules = {"torch"};
  if (query.module && TopLevelModule(query.script) != "torch") {
    in.modules.push_back(TopLevelModule(query.script));
  }
  in.search.pythonpath = Lookup(env, "PYTHONPATH");
  in.search.home = Lookup(env, "HOME");
  const auto no_user_site = Lookup(env, "PYTHONNOUSERSITE");
  in.search.no_user_site = no_user_site && !no_user_site->empty();
  // sys.path[0]: the script's directory, or the current one for -m.
  in.search.first = query.module ? query.cwd : (query.cwd / query.script).parent_path();
  in.pyenv_version = Lookup(env, "PYENV_VERSION");
  const auto pyenv_dir = Lookup(env, "PYENV_DIR");
  in.pyenv_dir = pyenv_dir && !pyenv_dir->empty() ? fs::path(*pyenv_dir) : query.cwd;
  return in;
}

// The other python3s, in PATH's order, then the system's; each once, the first not again.
std::optional<PythonChoice> FindOther(const PythonFacts& first, const char* path,
                                      const fs::path& system_bin, const ProbeInputs& in) {
  std::set<fs::path> seen{Identity(first.program)};
  std::vector<std::string> candidates = ExecCandidates("python3", path);
  candidates.push_back((system_bin / "python3").string());
  for (const std::string& candidate : candidates) {
    if (!Executable(candidate) || !seen.insert(Identity(candidate)).second) continue;
    const PythonFacts other = ProbePython(candidate, in);
    if (Fits(other)) return OtherPython(first, other);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ShadowedTorchrun(const char* path_value, const fs::path& self,
                                            const fs::path& system_bin) {
  const fs::path me = Canonical(self);
  std::vector<std::string> candidates = ExecCandidates("torchrun", path_value);
  candidates.push_back((system_bin / "torchrun").string());
  for (const std::string& candidate : candidates) {
    if (!Executable(candidate) || Canonical(candidate) == me) continue;
    return candidate;
  }
  return std::nullopt;
}

std::optional<PythonChoice> ChooseWorkerPython(const PythonQuery& query, const EnvMap& env) {
  const auto exec = Lookup(env, env_names::kPythonExec);
  if (query.no_python || (exec && !exec->empty())) return std::nullopt;
  const auto path_value = Lookup(env, "PATH");
  const char* path = path_value ? path_value->c_str() : nullptr;
  if (fs::path(query.argv0).filename() == "torchrun") {
    if (auto choice = DropInChoice(query, path)) return choice;
  }
  const auto first = FindExecutable("python3", path).found;
  if (!first) return std::nullopt;
  const ProbeInputs in = Inputs(query, env);
  const PythonFacts facts = ProbePython(*first, in);
  if (!LooksElsewhere(facts)) return std::nullopt;
  return FindOther(facts, path, query.system_bin, in);
}

}  // namespace cpplaunch
