#pragma once
// RunInBoundedChild: runs a piece of code that may block without limit (a call into a library
// that talks to another process, like PMIx) in a forked child, and gives up on it after a
// deadline. The caller never waits longer than `timeout` (plus at most a second to reap a
// child that was SIGKILLed), whatever the code does: block, crash or never return.
//
// The child inherits this process's memory, runs `body`, writes the text it returns to a pipe
// and exits; nothing it loads, starts or changes (libraries, threads, environment, signal
// handlers) reaches the caller. It dies with the caller (PR_SET_PDEATHSIG).
//
// Threads: call only while this process has a single thread (before the agent's loop and the
// workers exist); see posix::ForkHelper. Blocking: yes, up to the deadline.
// Errors: throws std::system_error when the pipe or the fork cannot be made; everything that
// happens in the child is a BoundedChildResult.

#include <chrono>
#include <functional>
#include <string>

namespace cpplaunch {

struct BoundedChildResult {
  enum class Status {
    kDone,      // `body` returned; `output` is its text
    kTimedOut,  // the deadline passed first; the child was SIGKILLed
    kDied,      // the child ended without returning (a crash, an exception, an exit)
  };
  Status status = Status::kDied;
  std::string output;
};

// `body` runs in the child; its result (at most 4 KiB, written at once) comes back in
// `output`. An exception escaping `body` ends the child without output (kDied).
BoundedChildResult RunInBoundedChild(const std::function<std::string()>& body,
                                     std::chrono::milliseconds timeout);

}  // namespace cpplaunch
