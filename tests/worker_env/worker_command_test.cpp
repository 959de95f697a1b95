#include "worker_env/worker_command.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using Argv = std::vector<std::string>;

TEST_CASE("python script: [python, -u, script, args...] with python3 by default") {
  CommandSpec spec{"train.py", {"--lr", "0.1"}, false, false};
  CHECK(BuildWorkerCommand({}, spec, 0).argv == Argv{"python3", "-u", "train.py", "--lr", "0.1"});
  CHECK(EntrypointName(spec) == "train.py");
}

TEST_CASE("PYTHON_EXEC from the agent's environment is the interpreter") {
  CommandSpec spec{"train.py", {}, false, false};
  EnvMap env{{"PYTHON_EXEC", "/usr/bin/python3.11"}};
  CHECK(BuildWorkerCommand(env, spec, 0).argv == Argv{"/usr/bin/python3.11", "-u", "train.py"});
  CHECK(BuildWorkerCommand({{"PYTHON_EXEC", ""}}, spec, 0).argv.front() == "python3");
}

TEST_CASE("module: [python, -u, -m, module, args...]") {
  CommandSpec spec{"pkg.train", {"x"}, true, false};
  CHECK(BuildWorkerCommand({}, spec, 1).argv == Argv{"python3", "-u", "-m", "pkg.train", "x"});
  CHECK(EntrypointName(spec) == "pkg.train");
}

TEST_CASE("no-python: [program, args...], PYTHON_EXEC ignored") {
  CommandSpec spec{"./trainer", {"--steps", "3"}, false, true};
  EnvMap env{{"PYTHON_EXEC", "/opt/py"}};
  CHECK(BuildWorkerCommand(env, spec, 0).argv == Argv{"./trainer", "--steps", "3"});
  CHECK(EntrypointName(spec) == "./trainer");
}

TEST_CASE("every argument goes through $local_rank substitution, the program does not") {
  CommandSpec spec{
      "run_$local_rank.py", {"a$$b", "$local_rank", "${local_rank}", "$other"}, false, false};
  CHECK(BuildWorkerCommand({}, spec, 1).argv ==
        Argv{"python3", "-u", "run_1.py", "a$b", "1", "1", "$other"});
  CommandSpec binary{"./bin_$local_rank", {"--rank=${local_rank}"}, false, true};
  CHECK(BuildWorkerCommand({}, binary, 2).argv == Argv{"./bin_$local_rank", "--rank=2"});
}

TEST_CASE("arguments that look like options are passed as they are") {
  CommandSpec spec{"train.py", {"--nproc-per-node", "8", "-r", "3", "--"}, false, false};
  CHECK(BuildWorkerCommand({}, spec, 0).argv ==
        Argv{"python3", "-u", "train.py", "--nproc-per-node", "8", "-r", "3", "--"});
}

TEST_CASE("entry-point name skips leading dashes as torchrun does") {
  CHECK(EntrypointName({"-weird", {"-x", "data"}, false, false}) == "data");
  CHECK(EntrypointName({"-weird", {"-x"}, false, false}).empty());
  CHECK(EntrypointName({"", {}, false, false}).empty());
}

}  // namespace
}  // namespace cpplaunch
