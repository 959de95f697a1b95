#pragma once
// --signals-to-handle and --forward-signals: a comma-separated list of Python signal-module
// names ("SIGTERM,SIGUSR1") turned into signal numbers. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

struct SignalList {
  std::vector<int> signals;           // in the given order, without repeats
  std::vector<std::string> warnings;  // one line per skipped name
};

// Names are exact, case-sensitive and whitespace-stripped, as torchrun's getattr(signal,
// name). A name that is not a signal ("TERM", "", "SIGFOO") is skipped with a warning, as
// torchrun logs and skips it. SIGKILL and SIGSTOP cannot be caught and SIGCHLD is how the
// agent sees its workers exit: those are skipped with a warning too.
SignalList ParseSignalList(std::string_view text);

// --forward-signals, cpplaunch's own option, is strict where torchrun's list is lenient: a
// name that is not a signal, or one the agent cannot handle (SIGKILL, SIGSTOP, SIGCHLD), is
// an error, because a preemption notice that is silently not forwarded is lost. "" is the
// empty list. Returns the signals (in order, without repeats), or nullopt with `*error` set
// to one line naming the bad entry and what to write instead.
std::optional<std::vector<int>> ParseForwardSignals(std::string_view text, std::string* error);

// The signal-module name of `signo` ("SIGUSR1"), or "signal <n>" for one without a name.
std::string SignalModuleName(int signo);

}  // namespace cpplaunch
