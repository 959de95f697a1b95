#pragma once
// What the file-timer watchdog did to a worker, and how the failure summary says it. Pure.

#include <optional>
#include <string>
#include <vector>

#include "launcher/watchdog/timer_table.h"

namespace cpplaunch {

struct WatchdogKill {
  TimerExpiry expiry;
  // The worker that exited with this pid, once its exit is seen; nullopt for a pid that is not
  // one of the agent's workers (a worker's child that registered its own timer).
  std::optional<int> local_rank;
  bool delivered = false;  // the signal was sent (false: the pid was gone already)
};

// "rank 3 (local rank 1, pid 4242) overran watchdog timer 'train.py#42', which allowed 5.0 s:
// killed with SIGKILL", one such line per kill, each prefixed "cpplaunch: " and ended with a
// newline; global rank = base_rank + local rank. "" when `kills` is empty.
std::string FormatWatchdogKills(const std::vector<WatchdogKill>& kills, int base_rank);

// The failure reason of the process `pid` when one of `kills` delivered its signal to it:
// "killed by SIGKILL from cpplaunch's file-timer watchdog (timer 'train.py#42', which allowed
// 5.0 s)"; nullopt when the watchdog sent it nothing.
std::optional<std::string> WatchdogKillReason(const std::vector<WatchdogKill>& kills, int pid);

}  // namespace cpplaunch
