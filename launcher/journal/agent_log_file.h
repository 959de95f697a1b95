#pragma once
// agent.log: with --log-dir, the agent's own log is kept in the run's log directory beside the
// workers' (<log dir>/<run id>_XXXXXXXX/agent.log), with times, for a post-mortem: every line
// the agent said, its INFO lines whatever LOGLEVEL (DEBUG too at LOGLEVEL=DEBUG), the failure
// summary, and what this listener hears of each attempt: its workers' pids, every exit, the
// decision, the agent's end. Without --log-dir nothing is written: the temporary run directory
// of such a job is removed at exit when it holds no file. A listener of the agent's events
// (agent_events.h); the log itself is launcher/log/agent_log.h.
// Threads: the agent's loop thread.

#include <string>
#include <vector>

#include "launcher/cli/options.h"
#include "launcher/job/agent_events.h"
#include "launcher/output/log_dir.h"
#include "launcher/report/agent_console.h"

namespace cpplaunch {

// Pure: the lines this listener writes (at INFO; a worker's clean exit at DEBUG).
// "attempt 1: pids 4242 (rank 8), 4243 (rank 9)"
std::string WorkerPidsLine(const Round& round, const std::vector<LiveWorker>& workers);
// "local rank 1 (pid 4243) killed by SIGSEGV"
std::string WorkerExitLine(const WorkerExitEvent& event);
std::string DecisionLine(const AttemptDecided& decided);
std::string AgentEndedLine(const AgentEnded& ended);

class AgentLogFile final : public AgentListener {
 public:
  // Opens agent.log when `options` name a log directory that `logs` made (a failure to open is
  // said in one line; the job goes on). `console` outlives the listener.
  AgentLogFile(const LaunchOptions& options, const LogDir& logs, AgentConsole& console);

  void OnAttemptStarted(const AttemptStarted& started) override;
  void OnWorkerExit(const WorkerExitEvent& event) override;
  void OnDecision(const AttemptDecided& decided) override;
  void OnAgentEnded(const AgentEnded& ended) override;

 private:
  AgentConsole& console_;
};

}  // namespace cpplaunch
