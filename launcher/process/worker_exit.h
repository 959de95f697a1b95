#pragma once
// How one worker process ended, built from a wait(2) status. Pure value type.

#include <string>

namespace cpplaunch {

class WorkerExit {
 public:
  // From a raw status as returned by waitpid().
  static WorkerExit FromWaitStatus(int status);
  static WorkerExit Exited(int code) { return WorkerExit(code, 0); }
  static WorkerExit Signaled(int signo) { return WorkerExit(0, signo); }
  // Killed by `signo` and the kernel wrote a core dump (WCOREDUMP, CLD_DUMPED).
  static WorkerExit Dumped(int signo) { return WorkerExit(0, signo, true); }

  bool ok() const { return signal_ == 0 && code_ == 0; }
  bool signaled() const { return signal_ != 0; }
  int code() const { return code_; }      // meaningful when !signaled()
  int signal() const { return signal_; }  // meaningful when signaled()
  bool core_dumped() const { return core_dumped_; }

  // torchrun's view: the exit code, or -signo for a death by signal.
  int torch_code() const { return signaled() ? -signal_ : code_; }
  // A shell's view: the exit code, or 128 + signo.
  int shell_code() const { return signaled() ? 128 + signal_ : code_; }
  // "exited with code 3" / "killed by SIGSEGV" / "killed by SIGABRT (core dumped)".
  std::string describe() const;

  // Same code or same signal; whether a core was written is extra information, not a
  // different end.
  friend bool operator==(const WorkerExit& a, const WorkerExit& b) {
    return a.code_ == b.code_ && a.signal_ == b.signal_;
  }

 private:
  WorkerExit(int code, int signo, bool core_dumped = false)
      : code_(code), signal_(signo), core_dumped_(core_dumped) {}
  int code_ = 0;
  int signal_ = 0;
  bool core_dumped_ = false;
};

// "SIGTERM" for 15; "signal 42" for numbers without a name.
std::string SignalName(int signo);

}  // namespace cpplaunch
