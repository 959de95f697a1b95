#pragma once
// --signals-to-handle: a comma-separated list of Python signal-module names ("SIGTERM,
// SIGUSR1") turned into signal numbers. Pure.

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

}  // namespace cpplaunch
