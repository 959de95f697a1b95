#include "launcher/watchdog/watchdog_kill.h"

#include <catch2/catch.hpp>

namespace cpplaunch {

TEST_CASE("FormatWatchdogKills names the rank, the scope and how long it had",
          "[launcher][watchdog]") {
  std::vector<WatchdogKill> kills = {
      {TimerExpiry{4242, "train.py#42", 9, 5.04}, 1, true},
      {TimerExpiry{777, "loader", 15, 2}, std::nullopt, false},
  };
  CHECK(FormatWatchdogKills(kills, 2) ==
        "cpplaunch: rank 3 (local rank 1, pid 4242) overran watchdog timer 'train.py#42', "
        "which allowed 5.0 s: killed with SIGKILL\n"
        "cpplaunch: process 777 (not a worker) overran watchdog timer 'loader', which allowed "
        "2.0 s: already gone, SIGTERM not sent\n");
  CHECK(FormatWatchdogKills({}, 0).empty());
}

// Issue 23 item 7: the failure summary called the watchdog's own kill one "from outside the job".
TEST_CASE("WatchdogKillReason names the watchdog for the pids it killed, and only those",
          "[launcher][watchdog]") {
  std::vector<WatchdogKill> kills = {
      {TimerExpiry{4242, "train.py#42", 9, 5.04}, 1, true},
      {TimerExpiry{777, "loader", 15, 2}, std::nullopt, false},
  };
  CHECK(WatchdogKillReason(kills, 4242) ==
        "killed by SIGKILL from cpplaunch's file-timer watchdog (timer 'train.py#42', which "
        "allowed 5.0 s)");
  CHECK_FALSE(WatchdogKillReason(kills, 777));  // not delivered: the signal came from elsewhere
  CHECK_FALSE(WatchdogKillReason(kills, 1));
}

}  // namespace cpplaunch
