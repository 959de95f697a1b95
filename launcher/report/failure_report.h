#pragma once
// The failure summary cpplaunch prints on stderr when workers fail: torchrun's ChildFailedError
// box (same rules, fields and wording, so people and log scrapers read it the same way) without
// the launcher's Python traceback; the one-line "failed (exitcode: ...)" log message; and the
// agent's own error file. Pure formatting: the caller reads the error files (error_file.h).
//
// The box is preceded by one line, "torch.distributed.elastic.multiprocessing.errors.
// ChildFailedError:", because tools that scan job logs for torchrun failures match that name.

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/process/worker_exit.h"
#include "launcher/report/error_file.h"

namespace cpplaunch {

// One failed (or torn down) worker, as the agent saw it.
struct FailureRecord {
  int local_rank = 0;
  int global_rank = 0;
  int pid = 0;
  WorkerExit exit = WorkerExit::Exited(1);
  std::chrono::system_clock::time_point time;  // when the agent saw the worker end
  std::string host;                            // FQDN
  std::string error_file;                      // the worker's TORCHELASTIC_ERROR_FILE ("" = none)
  bool killed_by_teardown = false;             // stopped by cpplaunch after the root cause
  // Plain words beyond the exit code (exit_explanation.h), shown as a "reason" line; "" = none.
  std::string reason;
};

struct WorkerFailure {
  FailureRecord record;
  std::optional<WorkerError> error;  // the worker's error file, when it wrote one
};

// Reads each record's error file (ReadWorkerError). Never throws.
std::vector<WorkerFailure> LoadWorkerFailures(std::vector<FailureRecord> records);

// When the failure happened: the error file's timestamp if it has one, else the detection time.
std::chrono::system_clock::time_point FailureTime(const WorkerFailure& failure);

// Index of the root cause: the earliest FailureTime among failures not killed by the teardown
// (among all of them if every one was), ties broken by the lower global rank.
// Requires a non-empty vector.
std::size_t RootCauseIndex(const std::vector<WorkerFailure>& failures);

// The summary (ending with '\n'), failures listed in global-rank order:
//
//   torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
//   ============================================================
//   train.py FAILED
//   ------------------------------------------------------------
//   Failures:
//   [stopped by cpplaunch after the root cause]: rank 1 (pid 4243) SIGTERM, rank 2 (pid ...
//   ------------------------------------------------------------
//   Root Cause (first observed failure):
//   [0]:
//     ...
//     exitcode  : -9 (pid: 4242) SIGKILL
//     reason    : killed by the kernel's OOM killer (memory limit 64.0 MiB, peak 64.0 MiB)
//     error_file: <N/A>
//     traceback : Signal 9 (SIGKILL) received by PID 4242
//   ============================================================
//
// Workers the teardown stopped (not the root cause) share that one line; other failures get
// torchrun's seven-line entry. Rules are min(widest entry line, 60) wide (widths in code points);
// time is local time, to the second; a traceback from the error file is indented by two spaces on
// continuation lines; without one, torchrun's made-up messages are used; the "reason" line
// (cpplaunch's own) appears only for a record with one. Requires a non-empty vector.
std::string FormatFailureSummary(std::string_view entrypoint,
                                 const std::vector<WorkerFailure>& failures);

// torchrun's per-failure log message (users grep for it), without the logger's prefix:
// "failed (exitcode: -9) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3".
std::string FailedLogLine(const FailureRecord& record, std::string_view binary);

// The document for the agent's own TORCHELASTIC_ERROR_FILE: the root cause's error file with
// "errorCode": <torch_code> added inside "message" (only for the object shape and a non-zero
// code, as torchrun does); or, when the worker wrote no usable file, one synthesized in the
// object shape: message "ChildFailedError: <entrypoint> FAILED (rank R, local_rank L): <what>",
// py_callstack = `summary` (the text of FormatFailureSummary), timestamp, errorCode.
nlohmann::json AgentErrorDocument(const WorkerFailure& root, std::string_view entrypoint,
                                  std::string_view summary);

}  // namespace cpplaunch
