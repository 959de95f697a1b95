#include "launcher/report/job_exit_status.h"

namespace cpplaunch {

int JobExitStatus(ExitCodeMode mode, ExitCode decided, const std::vector<WorkerFailure>& failures) {
  const int torchrun = ProcessExitCode(decided);
  if (mode != ExitCodeMode::kWorker || decided != ExitCode::kFailure || failures.empty()) {
    return torchrun;
  }
  const FailureRecord& root = failures[RootCauseIndex(failures)].record;
  if (root.killed_by_teardown || root.exit.ok()) return torchrun;
  // A process status is one byte: a code above 255 could not have come from exit() anyway.
  const int code = root.exit.shell_code();
  return code > 0 && code <= 255 ? code : torchrun;
}

}  // namespace cpplaunch
