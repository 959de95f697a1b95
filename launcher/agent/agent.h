#pragma once
// The agent: the story of one cpplaunch run on one host.
//
//   options -> job (single host, or a multi-host session) -> log directory -> store
//     -> rendezvous (the attempt's rank layout) -> worker specs -> spawn (WorkerGroup)
//     -> supervise (Supervisor): first failure stops all, signals are forwarded
//     -> drain their output -> the job decides: next attempt, or exit with a code
//   -> exit code: ExitCode::kSuccess, kFailure for any failure, kUsage (as torchrun).
//
// Everything runs on one boost::asio::io_context on the calling thread: the store server,
// worker exits (pidfd events), the agent's signals, worker output pipes and timers.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "launcher/agent/unsupported_option.h"
#include "launcher/cli/options.h"
#include "worker_env/env_map.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace cpplaunch {

class JobSentinel;
class WorkerGroup;

// What the agent runs on besides the options. Tests replace the worker group and the console.
struct AgentParts {
  // Makes the group that runs every attempt's workers, on the agent's loop.
  std::function<std::unique_ptr<WorkerGroup>(boost::asio::io_context&)> make_worker_group;
  // The agent's console; owned by the caller and open while the agent runs.
  int stdout_fd = 1;
  int stderr_fd = 2;
  // Called once when the agent ends, after the last attempt's workers are gone and before its
  // own clean-up (the sentinel's Quit, so that the two overlap); may be empty.
  std::function<void()> job_over;
};

class Agent {
 public:
  // The real thing: POSIX worker processes, the process's stdout and stderr. `sentinel` (may be
  // null) guards the workers if the agent itself is killed; it must be started before the
  // agent creates threads or sockets, and outlive the agent.
  Agent(LaunchOptions options, EnvMap environment, JobSentinel* sentinel);
  Agent(LaunchOptions options, EnvMap environment, AgentParts parts);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Runs the job to its end and returns the process exit code. Blocks; call once.
  int Run();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cpplaunch
