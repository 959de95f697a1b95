// The cost of choosing the workers' Python (launcher/interpreter/) on this machine, as main
// pays it once per launch: python3 from PATH kept, another chosen (when the first python3 on
// PATH has no torch, as a pyenv shim or a venv without it), and the drop-in torchrun reading
// the #! of the torchrun it shadows. Prints JSON: {"cases": [{"case", "path", "choice",
// "median_us", "max_us"}], "runs"}.
//
// usage: interpreter_cost RUNS VENV_WITHOUT_TORCH_BIN

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "launcher/interpreter/worker_python.h"

extern char** environ;

namespace {

cpplaunch::EnvMap Environment() {
  cpplaunch::EnvMap env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const auto eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  env.erase("PYTHON_EXEC");
  return env;
}

void Measure(const char* name, const std::string& argv0, const std::string& path, int runs,
             bool last) {
  cpplaunch::EnvMap env = Environment();
  env["PATH"] = path;
  cpplaunch::PythonQuery query{argv0, false, false, "train.py", "/tmp", "/proc/self/exe"};
  std::vector<double> us;
  std::string choice = "python3 from PATH";
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto chosen = cpplaunch::ChooseWorkerPython(query, env);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
    if (chosen) choice = chosen->program;
  }
  std::sort(us.begin(), us.end());
  std::printf(
      "{\"case\": \"%s\", \"path\": \"%s\", \"choice\": \"%s\", \"median_us\": %.1f, "
      "\"max_us\": %.1f}%s\n",
      name, path.c_str(), choice.c_str(), us[us.size() / 2], us.back(), last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: interpreter_cost RUNS VENV_WITHOUT_TORCH_BIN\n");
    return 2;
  }
  const int runs = std::max(1, std::atoi(argv[1]));
  const std::string venv = argv[2];
  std::printf("{\"runs\": %d, \"cases\": [\n", runs);
  Measure("python3 on PATH has torch: kept", "cpplaunch", "/usr/bin:/bin", runs, false);
  Measure("a venv without torch first: another chosen", "cpplaunch", venv + ":/usr/bin:/bin", runs,
          false);
  const char* home = std::getenv("HOME");
  const std::string shims = std::string(home != nullptr ? home : "/root") + "/.pyenv/shims";
  if (::access((shims + "/python3").c_str(), X_OK) == 0) {
    Measure("a pyenv shim without torch first: another chosen", "cpplaunch",
            shims + ":/usr/bin:/bin", runs, false);
  }
  Measure("the drop-in torchrun: the #! of /usr/bin/torchrun", "torchrun", venv + ":/usr/bin:/bin",
          runs, true);
  std::printf("]}\n");
  return 0;
}
