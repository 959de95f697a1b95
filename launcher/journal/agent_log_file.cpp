#include "launcher/journal/agent_log_file.h"

namespace cpplaunch {

std::string WorkerPidsLine(const Round& round, const std::vector<LiveWorker>& workers) {
  std::string line = "attempt " + std::to_string(round.restart_count) + ": pids";
  const char* separator = " ";
  for (const LiveWorker& worker : workers) {
    line += separator + std::to_string(worker.pid) + " (rank " +
            std::to_string(round.layout.base_rank + worker.id) + ")";
    separator = ", ";
  }
  return line;
}

std::string WorkerExitLine(const WorkerExitEvent& event) {
  return "local rank " + std::to_string(event.id) + " (pid " + std::to_string(event.pid) + ") " +
         event.exit.describe();
}

std::string DecisionLine(const AttemptDecided& decided) {
  const std::string attempt = "attempt " + std::to_string(decided.result.restart_count) +
                              " ended: " + OutcomeName(decided.result.outcome);
  if (decided.decision.next == NextStep::kNextAttempt) {
    return attempt + "; next: " +
           (decided.decision.consumes_restart ? "a restart" : "a new round, no restart used");
  }
  return attempt + "; the job ends with code " +
         std::to_string(static_cast<int>(decided.decision.exit_code));
}

// What ended the agent (an error, a signal) was said in its own line just before.
std::string AgentEndedLine(const AgentEnded& ended) {
  return "the agent exits with status " + std::to_string(ended.exit_status);
}

AgentLogFile::AgentLogFile(const LaunchOptions& options, const LogDir& logs, AgentConsole& console)
    : console_(console) {
  if (!options.log_dir || !logs.enabled()) return;
  const auto path = logs.run_dir() / "agent.log";
  const std::string problem = console_.log().OpenFile(path);
  if (problem.empty()) {
    console_.Info("the agent's log: " + path.string());
  } else {
    console_.Say(problem);
  }
}

void AgentLogFile::OnAttemptStarted(const AttemptStarted& started) {
  console_.Info(WorkerPidsLine(started.round, started.workers));
}

void AgentLogFile::OnWorkerExit(const WorkerExitEvent& event) {
  if (event.exit.ok()) return console_.Debug(WorkerExitLine(event));
  console_.Info(WorkerExitLine(event));
}

void AgentLogFile::OnDecision(const AttemptDecided& decided) {
  console_.Info(DecisionLine(decided));
}

void AgentLogFile::OnAgentEnded(const AgentEnded& ended) { console_.Info(AgentEndedLine(ended)); }

}  // namespace cpplaunch
