#include "launcher/watchdog/watchdog_kill.h"

#include <cstdio>

#include "launcher/process/worker_exit.h"

namespace cpplaunch {
namespace {

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds < 0 ? 0.0 : seconds);
  return text;
}

std::string Who(const WatchdogKill& kill, int base_rank) {
  const std::string pid = "pid " + std::to_string(kill.expiry.pid);
  if (!kill.local_rank) return "process " + std::to_string(kill.expiry.pid) + " (not a worker)";
  return "rank " + std::to_string(base_rank + *kill.local_rank) + " (local rank " +
         std::to_string(*kill.local_rank) + ", " + pid + ")";
}

}  // namespace

std::string FormatWatchdogKills(const std::vector<WatchdogKill>& kills, int base_rank) {
  std::string text;
  for (const WatchdogKill& kill : kills) {
    text += "cpplaunch: " + Who(kill, base_rank) + " overran watchdog timer '" +
            kill.expiry.scope_id + "', which allowed " + Seconds(kill.expiry.allowed_seconds) +
            ": " +
            (kill.delivered ? "killed with " + SignalName(kill.expiry.signal)
                            : "already gone, " + SignalName(kill.expiry.signal) + " not sent") +
            "\n";
  }
  return text;
}

std::optional<std::string> WatchdogKillReason(const std::vector<WatchdogKill>& kills, int pid) {
  for (const WatchdogKill& kill : kills) {
    if (!kill.delivered || kill.expiry.pid != pid) continue;
    return "killed by " + SignalName(kill.expiry.signal) +
           " from cpplaunch's file-timer watchdog (timer '" + kill.expiry.scope_id +
           "', which allowed " + Seconds(kill.expiry.allowed_seconds) + ")";
  }
  return std::nullopt;
}

}  // namespace cpplaunch
