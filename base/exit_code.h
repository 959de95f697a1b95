#pragma once
// The process exit codes of cpplaunch (torchrun's) and of cpplaunch-store: the one mapping from
// an outcome to a number, used by both mains, the agent and the tests (docs/troubleshooting.md
// lists them for users).

namespace cpplaunch {

enum class ExitCode : int {
  kSuccess = 0,  // every worker on every host succeeded (or --help)
  kFailure = 1,  // a worker or the agent failed, a signal stopped the job, or a value is invalid
  kUsage = 2,    // the command line cannot be parsed, or asks for an unsupported option
};

constexpr int ProcessExitCode(ExitCode code) { return static_cast<int>(code); }

}  // namespace cpplaunch
