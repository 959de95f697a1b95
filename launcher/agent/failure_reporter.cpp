#include "launcher/agent/failure_reporter.h"

#include <cstddef>
#include <exception>

#include "base/executable_search.h"
#include "launcher/diagnosis/full_disk.h"
#include "launcher/diagnosis/libuv_hint.h"
#include "launcher/diagnosis/stderr_tail.h"
#include "launcher/job/worker_specs.h"
#include "launcher/report/error_file.h"
#include "launcher/report/failure_report.h"
#include "launcher/watchdog/watchdog_kill.h"
#include "worker_env/env_names.h"

namespace cpplaunch {
namespace {

// Lines of the root cause's stderr.log shown when it wrote no error file.
constexpr std::size_t kStderrTailLines = 10;

}  // namespace

FailureReporter::FailureReporter(const LaunchOptions& options, const EnvMap& env,
                                 AgentConsole& console, const LogDir& logs,
                                 const Watchdog* watchdog)
    : options_(options), env_(env), console_(console), logs_(logs), watchdog_(watchdog) {}

void FailureReporter::OnDecision(const AttemptDecided& decided) {
  if (decided.failures == nullptr) return;
  const FailureFindings& findings = *decided.failures;
  const Interpreter interpreter = WorkerInterpreter();
  // The file that ran, as torchrun's sys.executable: "python3" alone does not say which.
  const std::string binary =
      interpreter.resolved.empty() ? interpreter.program : interpreter.resolved;
  for (const FailureRecord& record : findings.records) {
    if (!record.killed_by_teardown) console_.Say(FailedLogLine(record, binary));
  }
  if (findings.records.empty() || !findings.final) {
    return console_.err().Write(findings.hang_report);
  }
  ReportFinal(findings, decided, interpreter);
}

void FailureReporter::ReportFinal(const FailureFindings& findings, const AttemptDecided& decided,
                                  const Interpreter& interpreter) {
  const int restart_count = decided.result.restart_count;
  if (logs_.HoldsFiles()) {
    console_.Say("the workers' log and error files are in " +
                 logs_.AttemptDir(restart_count).string());
  }
  const std::string entrypoint = EntrypointName(WorkerCommandSpec(options_));
  const std::string summary = Summary(findings, entrypoint, decided.round.layout.base_rank);
  console_.err().Write(summary);
  console_.Keep(summary);
  const WorkerFailure& root = findings.failures[*findings.root_cause];
  if (!root.error) {
    const auto log = logs_.StderrLog(restart_count, root.record.local_rank);
    if (auto note = StderrTailNote(root.record.global_rank, log, kStderrTailLines)) {
      console_.err().Write(*note);
    }
  }
  console_.err().Write(findings.hang_report);
  // The log files' file system filled up: the workers could say nothing, this says why.
  if (logs_.HoldsFiles()) {
    const auto dir = logs_.AttemptDir(restart_count);
    if (auto note = FullDiskNote(dir, FreeBytes(dir))) console_.Say(*note);
  }
  SayLibuvHint(findings.failures, restart_count);
  SayInterpreterHint(findings, decided.round, restart_count, interpreter);
  WriteAgentErrorFile(root, entrypoint, summary);
}

// The box, then what else went wrong that the user would look at next: a log cut short, a
// worker the watchdog killed.
std::string FailureReporter::Summary(const FailureFindings& findings, const std::string& entrypoint,
                                     int base_rank) const {
  std::string summary = FormatFailureSummary(entrypoint, findings.failures);
  for (const LogWriteError& cut : findings.log_write_errors) {
    summary += "cpplaunch: log file cut short: " + cut.path.string() + " (" + cut.error + ")\n";
  }
  if (watchdog_) summary += FormatWatchdogKills(watchdog_->kills(), base_rank);
  return summary;
}

// Workers that failed by themselves (not stopped by the teardown), all with PyTorch's "built
// without libuv" error: one line on the way out.
void FailureReporter::SayLibuvHint(const std::vector<WorkerFailure>& failures, int restart_count) {
  std::vector<std::string> texts;
  for (const WorkerFailure& failure : failures) {
    if (failure.record.killed_by_teardown) continue;
    texts.push_back(
        FailureText(failure, logs_.StderrLog(restart_count, failure.record.local_rank)));
  }
  if (auto hint = LibuvHint(texts, options_.worker_store)) console_.Say(*hint);
}

// Every worker failed at once, alike, and said why: the wrong python (a venv's, pyenv's).
void FailureReporter::SayInterpreterHint(const FailureFindings& findings, const Round& round,
                                         int restart_count, const Interpreter& interpreter) {
  if (options_.no_python) return;
  std::vector<std::string> texts;
  for (const WorkerFailure& failure : findings.failures) {
    texts.push_back(
        FailureText(failure, logs_.StderrLog(restart_count, failure.record.local_rank)));
  }
  const auto workers = static_cast<std::size_t>(round.layout.local_world_size);
  // What the job needs its interpreter to have: torch, and the package -m runs.
  std::vector<std::string> modules{"torch"};
  if (options_.module)
    modules.push_back(options_.training_script.substr(0, options_.training_script.find('.')));
  if (auto hint = InterpreterHint(findings.records, workers, findings.attempt_started, texts,
                                  interpreter, modules)) {
    console_.Say(*hint);
  }
}

// The agent's own error file, when its parent (a scheduler, a nested launcher) asked for one.
void FailureReporter::WriteAgentErrorFile(const WorkerFailure& root, const std::string& entrypoint,
                                          const std::string& summary) {
  auto path = Lookup(env_, env_names::kErrorFile);
  if (!path || path->empty()) return;
  try {
    WriteErrorFile(*path, AgentErrorDocument(root, entrypoint, summary));
  } catch (const std::exception& e) {
    console_.Say("cannot write the error file " + *path + ": " + e.what());
  }
}

// What the workers' argv[0] is and where execvp finds it on their PATH.
Interpreter FailureReporter::WorkerInterpreter() const {
  Interpreter interpreter;
  interpreter.program = WorkerArgv(options_, env_, 0).front();
  const auto exec = Lookup(env_, env_names::kPythonExec);
  interpreter.from_python_exec = !options_.no_python && exec && !exec->empty();
  if (!interpreter.from_python_exec && !options_.no_python) {
    interpreter.origin = options_.python_origin;
  }
  const auto path = Lookup(env_, "PATH");
  interpreter.resolved =
      FindExecutable(interpreter.program, path ? path->c_str() : nullptr).found.value_or("");
  return interpreter;
}

}  // namespace cpplaunch
