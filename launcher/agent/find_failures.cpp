#include "launcher/agent/find_failures.h"

#include <utility>

#include "launcher/diagnosis/exit_explanation.h"
#include "launcher/diagnosis/program_check.h"
#include "launcher/job/worker_specs.h"
#include "launcher/report/attempt_failures.h"

namespace cpplaunch {
namespace {

// Each failure's plain words: the hang, a signal of the agent's own watchdog, an OOM kill, a
// signal from outside, a crash, a program that could not be run.
void AddReasons(std::vector<FailureRecord>& records, int restart_count, const Attempt& attempt,
                const HangDiagnosis& hang, const AgentListener& senders,
                const LaunchOptions& options, const EnvMap& env, const LogDir& logs) {
  const std::string program = WorkerArgv(options, env, 0).front();
  for (FailureRecord& record : records) {
    if (auto reason = hang.Reason(record, logs, restart_count)) {
      record.reason = std::move(*reason);
      continue;
    }
    if (auto sent = record.exit.signaled() ? senders.SignalSent(record.pid) : std::nullopt) {
      record.reason = std::move(*sent);
      continue;
    }
    ExitFacts facts;
    facts.exit = record.exit;
    facts.sent_by_cpplaunch = record.killed_by_teardown;
    facts.program = program;
    const auto& verdicts = attempt.oom_verdicts();
    if (auto it = verdicts.find(record.pid); it != verdicts.end()) {
      facts.oom_counter_read = it->second.counter_read;
      facts.oom = it->second.oom;
    }
    if (!record.exit.signaled() && (record.exit.code() == 126 || record.exit.code() == 127)) {
      facts.program_check = CheckProgram(program, Lookup(env, "PATH"));
    }
    record.reason = ExplainExit(facts);
  }
}

}  // namespace

FailureFindings FindFailures(const AttemptResult& result, bool final, const Attempt& attempt,
                             const HangDiagnosis& hang, const AgentListener& senders,
                             const LaunchOptions& options, const EnvMap& env,
                             const std::string& host, const LogDir& logs) {
  FailureFindings findings;
  findings.final = final;
  findings.records = AttemptFailureRecords(result, attempt.round().layout.base_rank, host, logs);
  AddReasons(findings.records, result.restart_count, attempt, hang, senders, options, env, logs);
  findings.hung = hang.hung();
  findings.hang_report = hang.Report(findings.records, logs, result.restart_count);
  findings.attempt_started = attempt.started();
  findings.log_write_errors = attempt.log_write_errors();
  if (final && !findings.records.empty()) {
    findings.failures = LoadWorkerFailures(findings.records);
    findings.root_cause = RootCauseIndex(findings.failures);
  }
  return findings;
}

}  // namespace cpplaunch
