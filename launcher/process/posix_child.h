#pragma once
// What a forked child may call before it execs or exits: async-signal-safe system calls only, no
// allocation and no lock, so that forking from a process with other threads stays safe. Shared
// by the workers' and helpers' children (posix_sys) and the sentinel's body (sentinel_process).

#include <signal.h>

namespace cpplaunch::posix {

// Writes the whole of `text` if it fits; gives up on a full non-blocking descriptor instead of
// waiting: a child that cannot report must still exit.
void WriteText(int fd, const char* text);
// Formats a non-negative number into `buf` (at least 12 bytes); returns where it starts.
const char* FormatNumber(long value, char* buf);
// Every signal but SIGKILL and SIGSTOP back to SIG_DFL.
void DefaultDispositions();
// An empty signal mask.
void UnblockAll();
// Closes every descriptor >= 3 except those in `keep` (sorted ascending, all >= 3).
void CloseAllExcept(const int* keep, int count);

// Blocks every signal around fork so that no handler of the agent (boost::asio's, which writes
// to the agent's own wake-up pipe) can run in the child before it resets dispositions.
class SignalBlock {
 public:
  SignalBlock() {
    sigset_t all;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &saved_);
  }
  ~SignalBlock() { ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace cpplaunch::posix
