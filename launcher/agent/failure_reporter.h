#pragma once
// The console's account of failed workers, as one of the agent's listeners: when the job's
// decision reports an attempt's failures (agent_events.h), in this order:
//   the "failed (exitcode: ...)" line of each worker that failed by itself (users grep for it);
//   then, for the final report only: where the workers' log and error files are, the failure
//   summary (torchrun's ChildFailedError box; failure_report.h) followed by the agent's log
//   files cut short and the watchdog's kills, the root cause's stderr tail when it wrote no
//   error file, where each rank was stuck after a hang, a full disk under the log files, the
//   libuv and interpreter hints, and the agent's own error file when its parent asked for one
//   (TORCHELASTIC_ERROR_FILE).
// A report that is not final shows only the failed lines and the hang's block.
// Threads: the agent's loop thread; reads the workers' logs and error files, never throws.

#include <string>
#include <vector>

#include "launcher/agent/watchdog.h"
#include "launcher/cli/options.h"
#include "launcher/diagnosis/interpreter_hint.h"
#include "launcher/job/agent_events.h"
#include "launcher/output/log_dir.h"
#include "launcher/report/agent_console.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class FailureReporter final : public AgentListener {
 public:
  // Everything given must outlive the reporter; `watchdog` is null when it does not run.
  FailureReporter(const LaunchOptions& options, const EnvMap& env, AgentConsole& console,
                  const LogDir& logs, const Watchdog* watchdog);

  void OnDecision(const AttemptDecided& decided) override;

 private:
  void ReportFinal(const FailureFindings& findings, const AttemptDecided& decided,
                   const Interpreter& interpreter);
  std::string Summary(const FailureFindings& findings, const std::string& entrypoint,
                      int base_rank) const;
  void SayLibuvHint(const std::vector<WorkerFailure>& failures, int restart_count);
  void SayInterpreterHint(const FailureFindings& findings, const Round& round, int restart_count,
                          const Interpreter& interpreter);
  void WriteAgentErrorFile(const WorkerFailure& root, const std::string& entrypoint,
                           const std::string& summary);
  Interpreter WorkerInterpreter() const;

  const LaunchOptions& options_;
  const EnvMap& env_;
  AgentConsole& console_;
  const LogDir& logs_;
  const Watchdog* watchdog_;
};

}  // namespace cpplaunch
