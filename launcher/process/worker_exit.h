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

  bool ok() const { return signal_ == 0 && code_ == 0; }
  bool signaled() const { return signal_ != 0; }
  int code() const { return code_; }      // meaningful when !signaled()
  int signal() const { return signal_; }  // meaningful when signaled()

  // torchrun's view: the exit code, or -signo for a death by signal.
  int torch_code() const { return signaled() ? -signal_ : code_; }
  // A shell's view: the exit code, or 128 + signo.
  int shell_code() const { return signaled() ? 128 + signal_ : code_; }
  // "exited with code 3" / "killed by SIGSEGV".
  std::string describe() const;

  friend bool operator==(const WorkerExit&, const WorkerExit&) = default;

 private:
  WorkerExit(int code, int signo) : code_(code), signal_(signo) {}
  int code_ = 0;
  int signal_ = 0;
};

// "SIGTERM" for 15; "signal 42" for numbers without a name.
std::string SignalName(int signo);

}  // namespace cpplaunch
