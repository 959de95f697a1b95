#include "launcher/diagnosis/exit_explanation.h"

#include <csignal>

#include "base/text.h"
#include "launcher/diagnosis/memory_cgroup.h"

namespace cpplaunch {
namespace {

std::string OomText(const OomKill& oom) {
  std::string text = "killed by the kernel's OOM killer (";
  text += oom.limit_bytes ? "memory limit " + HumanBytes(*oom.limit_bytes)
                          : std::string("no memory limit: the host ran out of memory");
  if (oom.peak_bytes) text += ", peak " + HumanBytes(*oom.peak_bytes);
  return text + ")";
}

std::string SigkillText(const ExitFacts& facts) {
  if (facts.oom) return OomText(*facts.oom);
  if (facts.oom_counter_read) {
    return "killed by SIGKILL from outside the job (not sent by cpplaunch; the memory cgroup "
           "counts no OOM kill)";
  }
  return "killed by SIGKILL, not sent by cpplaunch: from outside the job, or by the kernel's OOM "
         "killer (no memory cgroup counter to tell them apart)";
}

std::string SignalText(const ExitFacts& facts) {
  const int signo = facts.exit.signal();
  const std::string core = facts.exit.core_dumped() ? " (core dumped)" : "";
  if (facts.sent_by_cpplaunch) return "";
  if (IsCrashSignal(signo)) {
    return "crashed with " + SignalName(signo) + (core.empty() ? " (no core dump)" : core);
  }
  if (signo == SIGKILL) return SigkillText(facts);
  return "killed by " + SignalName(signo) + " from outside the job (not sent by cpplaunch)" + core;
}

std::string ProgramText(const ExitFacts& facts) {
  const std::string name = "'" + facts.program + "'";
  switch (*facts.program_check) {
    case ProgramCheck::kNotFound:
      return "could not run " + name + ": not found (no such file, or not on PATH)";
    case ProgramCheck::kNotExecutable:
      return "could not run " + name + ": it is not an executable file (permission denied)";
    case ProgramCheck::kRunnable:
      return name + " is executable: the worker itself exited " +
             std::to_string(facts.exit.code()) + ", or its #! interpreter is missing";
  }
  return "";
}

}  // namespace

bool IsCrashSignal(int signo) {
  switch (signo) {
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGABRT:
    case SIGTRAP:
    case SIGSYS:
      return true;
    default:
      return false;
  }
}

std::string ExplainExit(const ExitFacts& facts) {
  if (facts.exit.signaled()) return SignalText(facts);
  const int code = facts.exit.code();
  if ((code == 126 || code == 127) && facts.program_check) return ProgramText(facts);
  return "";
}

std::string DescribeUnkillable(int local_rank, int pid, char state, const std::string& wchan) {
  std::string text =
      "worker local rank " + std::to_string(local_rank) + " (pid " + std::to_string(pid) + ")";
  if (state == 'D') {
    text += " is in uninterruptible sleep (D state)";
    if (!wchan.empty()) text += " in the kernel at " + wchan;
    text += " and";
  } else if (state != '\0') {
    text += " (state " + std::string(1, state) + ")";
  }
  return text + " did not die after SIGKILL; abandoning it (it ends when the kernel lets go: " +
         "a hung device or network file system?)";
}

}  // namespace cpplaunch
