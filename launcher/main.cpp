// cpplaunch: a torchrun-compatible launcher. Exit codes as torchrun: 0 success, 1 any
// failure, 2 usage error.

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/exit_code.h"
#include "base/version.h"
#include "launcher/agent/agent.h"
#include "launcher/cli/options.h"
#include "launcher/interpreter/worker_python.h"
#include "launcher/process/job_sentinel.h"
#include "launcher/process/posix_sys.h"
#include "worker_env/env_map.h"

extern char** environ;

namespace {

// Read once at start and passed down as a value, so the options and the workers' environments
// stay pure and testable with a made-up environment. It lives here, with the other process
// globals main sets up (SIGPIPE, the sentinel), because nothing below main reads environ.
cpplaunch::EnvMap ProcessEnvironment() {
  cpplaunch::EnvMap env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    env.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), std::string(eq + 1));
  }
  return env;
}

// Help on stdout; errors on stderr, a usage error with argparse's hint.
void PrintParseOutcome(const cpplaunch::ParseResult& parsed) {
  using cpplaunch::ParseStatus;
  switch (parsed.status) {
    case ParseStatus::kHelp:
      std::fputs(parsed.message.c_str(), stdout);
      return;
    case ParseStatus::kVersion:
      std::fputs(cpplaunch::VersionLine("cpplaunch").c_str(), stdout);
      return;
    case ParseStatus::kUsageError:
      std::fprintf(stderr, "cpplaunch: error: %s\nTry 'cpplaunch --help' for more information.\n",
                   parsed.message.c_str());
      return;
    case ParseStatus::kValueError:
    case ParseStatus::kRefused:
      std::fprintf(stderr, "cpplaunch: error: %s\n", parsed.message.c_str());
      return;
    case ParseStatus::kOk:
      return;
  }
}

// The workers' Python when PYTHON_EXEC is unset, chosen once, before the agent: argv[0] says
// whether this is the drop-in torchrun. A choice other than python3 from PATH is said here.
void ChooseWorkerPython(cpplaunch::LaunchOptions& options, const char* argv0,
                        const cpplaunch::EnvMap& env) {
  std::error_code ec;
  cpplaunch::PythonQuery query{
      argv0 != nullptr ? argv0 : "",     options.no_python, options.module, options.training_script,
      std::filesystem::current_path(ec), "/proc/self/exe"};
  const auto choice = cpplaunch::ChooseWorkerPython(query, env);
  if (!choice) return;
  options.python = choice->program;
  options.python_origin = choice->origin;
  if (!choice->note.empty()) std::fprintf(stderr, "cpplaunch: %s\n", choice->note.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cpplaunch;
  const EnvMap env = ProcessEnvironment();
  const ParseResult parsed = ParseOptions(std::vector<std::string>(argv + 1, argv + argc), env);
  for (const std::string& warning : parsed.warnings)
    std::fprintf(stderr, "cpplaunch: warning: %s\n", warning.c_str());
  for (const std::string& note : parsed.notes)
    std::fprintf(stderr, "cpplaunch: %s\n", note.c_str());
  if (!parsed.ok()) {
    PrintParseOutcome(parsed);
    return parsed.exit_code();
  }
  // A console reader that goes away (`cpplaunch ... | head`) must not kill the agent and
  // orphan the job: writes then fail with EPIPE instead. Workers get default dispositions.
  std::signal(SIGPIPE, SIG_IGN);
  // The store's connections, the workers' pipes and log files share one descriptor table; a
  // soft limit of 1,024 is common and far below the hard one. Workers get the original back.
  posix::RaiseFileLimit();
  try {
    // Before any thread or socket exists: the sentinel kills the job if this process dies.
    std::unique_ptr<JobSentinel> sentinel = JobSentinel::Start();
    LaunchOptions options = parsed.options;
    ChooseWorkerPython(options, argv[0], env);
    Agent agent(options, env, sentinel.get());
    return agent.Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpplaunch: error: %s\n", e.what());
    return ProcessExitCode(ExitCode::kFailure);
  }
}
