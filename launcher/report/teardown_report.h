#pragma once
// What the agent says about a teardown while and after it happens, so that a worker that ignores
// SIGTERM does not mean --shutdown-timeout seconds of silence (issue 13): the failure and the
// stop at once, with when SIGKILL follows; afterwards which workers needed SIGKILL; and, after an
// agent signal, an end line that says what really happened. Pure formatting; thread-safe.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "launcher/process/supervisor.h"

namespace cpplaunch {

// "worker rank 1 (local rank 1, pid 4242) failed: exited with code 3; stopping the other 3
// workers: SIGTERM now, SIGKILL in 30 s to any still running (--shutdown-timeout)".
std::string FailureTeardownLine(const WorkerExitEvent& root, int base_rank,
                                std::size_t still_running, int stop_signal,
                                std::chrono::milliseconds grace);

// The line the agent prints at its first signal while workers run; a Ctrl-C (SIGINT) also says
// that another one kills at once.
std::string SignalTeardownLine(int signo, std::chrono::milliseconds grace);

// The local ranks the teardown had to SIGKILL (stopped by SIGKILL, which the supervisor only
// sends after the grace or at a second signal), as "1, 3"; "" when none.
std::string SigkilledRanks(const AttemptResult& result);

// "local ranks 1, 3 did not stop within 30 s of SIGTERM and were SIGKILLed", or "... were
// SIGKILLed at the second signal"; nullopt when no worker needed SIGKILL.
std::optional<std::string> SigkillLine(const AttemptResult& result, int stop_signal,
                                       std::chrono::milliseconds grace);

// "s" when `n` is not 1.
inline const char* Plural(std::size_t n) { return n == 1 ? "" : "s"; }

}  // namespace cpplaunch
