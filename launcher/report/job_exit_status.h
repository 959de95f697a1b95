#pragma once
// The number cpplaunch returns at the end of a job, under --exit-code. Pure.
//
//   torchrun (default): the agent's decision as is (0 success, 1 any failure, 2 usage).
//   worker: when the job failed because a worker of this host failed on its own (the root
//           cause of the summary), that worker's own code, so a test runner's meaning survives
//           (pytest's 5 stays 5): its exit code, or 128 + signal for a death by a signal, as a
//           shell reports it. Everything else (a signal to cpplaunch, a failure on another
//           host, the agent's own failure, a hang) keeps the decision's code.

#include <vector>

#include "base/exit_code.h"
#include "launcher/cli/options.h"
#include "launcher/report/failure_report.h"

namespace cpplaunch {

// `failures`: the final attempt's failure records of this host (may be empty).
int JobExitStatus(ExitCodeMode mode, ExitCode decided, const std::vector<WorkerFailure>& failures);

}  // namespace cpplaunch
