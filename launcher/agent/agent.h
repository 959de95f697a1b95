#pragma once
// The agent: the story of one cpplaunch run on one host.
//
//   options -> log directory -> store (hosted on --master-addr:--master-port)
//     -> rank layout + environment -> spawn the local workers (WorkerGroup)
//     -> supervise (Supervisor): first failure stops all, signals are forwarded
//     -> drain their output -> succeeded / restart (attempt n+1) / failed with a summary
//   -> exit code: 0 success, 1 any failure (as torchrun).
//
// Everything runs on one boost::asio::io_context on the calling thread: the store server,
// worker exits (pidfd events), the agent's signals, worker output pipes and timers.

#include <memory>
#include <optional>
#include <string>

#include "launcher/cli/options.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class JobSentinel;

// Options the command line accepts but this build cannot honour: a one-line message naming
// the option and what to do instead, or nullopt when everything asked for is supported.
std::optional<std::string> UnsupportedOption(const LaunchOptions& options);

class Agent {
 public:
  // `sentinel` (may be null) guards the workers if the agent itself is killed; it must be
  // started before the agent creates threads or sockets, and outlive the agent.
  Agent(LaunchOptions options, EnvMap environment, JobSentinel* sentinel);
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
