#include "launcher/process/worker_exit.h"

#include <sys/wait.h>

#include <csignal>
#include <cstring>

namespace cpplaunch {

WorkerExit WorkerExit::FromWaitStatus(int status) {
  // WTERMSIG, not the raw status: the core-dump bit must not leak into the signal number.
  if (WIFSIGNALED(status))
    return WCOREDUMP(status) ? Dumped(WTERMSIG(status)) : Signaled(WTERMSIG(status));
  return Exited(WEXITSTATUS(status));
}

std::string WorkerExit::describe() const {
  if (signaled())
    return "killed by " + SignalName(signal_) + (core_dumped_ ? " (core dumped)" : "");
  return "exited with code " + std::to_string(code_);
}

std::string SignalName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  if (abbrev == nullptr) return "signal " + std::to_string(signo);
  return std::string("SIG") + abbrev;
}

}  // namespace cpplaunch
