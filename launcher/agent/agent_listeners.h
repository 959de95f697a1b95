#pragma once
// Who listens to the agent (agent_events.h), built once before its first attempt, in the order
// they hear each event:
//   AgentLogFile     --log-dir: agent.log, the agent's own log with times, and its attempts'
//                    pids, exits and decisions (at INFO on the console too)
//   ElasticEventLog  --event-log-handler=console: torchelastic's events as JSON on stderr
//   Watchdog         TORCHELASTIC_ENABLE_FILE_TIMER=1: the file-timer server, told of each
//                    attempt and exit; its kills go to the event log, then to the console
//   FailureReporter  the failed lines, the failure summary, the hints, the agent's error file
//   LoopbackListener a job across hosts whose host name resolves to loopback: the warning at
//                    start, and the cause named after gloo's refused connect
//   StoreRefusalNote the agent handshakes this host's store refused, when the run failed
//   SlotChangeNote   a multi-host round: which host took which group rank, and survivors moved
//   StatusListener   --status-port: the HTTP endpoint (health, readiness, status, metrics)
// A new listener is added here; the agent does not change.
// Threads: the agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "launcher/cli/options.h"
#include "launcher/job/agent_events.h"
#include "launcher/job/job.h"
#include "launcher/multihost/host_name.h"
#include "launcher/output/log_dir.h"
#include "launcher/report/agent_console.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class StoreServer;

// What the listeners are built from. Every reference must outlive the listeners.
struct ListenerSetup {
  boost::asio::io_context& io;
  const LaunchOptions& options;
  EnvMap& env;  // the agent's environment (the watchdog adds its FIFO's path)
  AgentConsole& console;
  const LogDir& logs;
  std::string run_id;
  std::shared_ptr<HostName> host;
  std::chrono::steady_clock::time_point started_at;  // when the agent started
  Job& job;
  const StoreServer* store = nullptr;  // the store this agent serves (null: another host's)
  std::string secret;                  // the agents' secret ("" = none)
};

// Throws std::system_error when the watchdog's FIFO cannot be made, std::runtime_error when the
// status endpoint cannot listen.
std::unique_ptr<AgentListeners> MakeAgentListeners(const ListenerSetup& setup);

}  // namespace cpplaunch
