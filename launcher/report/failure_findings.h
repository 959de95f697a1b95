#pragma once
// What went wrong in one attempt, as the agent reports it after the job's decision: each failed
// or torn-down worker with its plain-words reason (a hang, an OOM kill, a signal from outside, a
// crash, a program that could not be run), and for the final report the workers' error files and
// the root cause. Built once by the agent (launcher/agent/find_failures.h), then heard by every
// listener (launcher/job/agent_events.h). A value.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "launcher/output/worker_output.h"
#include "launcher/report/failure_report.h"

namespace cpplaunch {

struct FailureFindings {
  bool final = false;  // no attempt follows: the summary, the hints and the error file are due
  std::vector<FailureRecord> records;  // every exit that was not a success, in observed order
  // final with records: the same records with their error files read, and the root cause.
  std::vector<WorkerFailure> failures;
  std::optional<std::size_t> root_cause;  // index into `failures`
  bool hung = false;                      // the workers were stopped because the job hung
  std::string hang_report;                // where each rank was stuck ("" unless hung)
  std::chrono::system_clock::time_point attempt_started;  // when the workers started
  std::vector<LogWriteError> log_write_errors;            // the agent's own log files cut short
};

}  // namespace cpplaunch
