#include "launcher/watchdog/timer_table.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TimerRequest Acquire(int pid, std::string scope, double expiration, int signal = 9) {
  return TimerRequest{pid, std::move(scope), expiration, signal};
}
TimerRequest Release(int pid, std::string scope) {
  return TimerRequest{pid, std::move(scope), -1, 0};
}

}  // namespace

TEST_CASE("TimerTable: a released scope never expires", "[launcher][watchdog]") {
  TimerTable table;
  table.Apply(Acquire(10, "step", 105), 100);
  table.Apply(Release(10, "step"), 101);
  CHECK(table.size() == 0);
  CHECK_FALSE(table.NextExpiration());
  CHECK(table.TakeExpired(1000).empty());
}

TEST_CASE("TimerTable: an acquire replaces the same scope's timer", "[launcher][watchdog]") {
  TimerTable table;
  table.Apply(Acquire(10, "step", 105), 100);
  table.Apply(Acquire(10, "step", 120), 110);
  CHECK(table.size() == 1);
  CHECK(table.NextExpiration() == 120);
  CHECK(table.TakeExpired(119).empty());
  auto expired = table.TakeExpired(120);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].allowed_seconds == 10);
}

TEST_CASE("TimerTable reaps each pid once, with its earliest timer that has a signal",
          "[launcher][watchdog]") {
  TimerTable table;
  table.Apply(Acquire(10, "a-no-signal", 101, 0), 100);
  table.Apply(Acquire(10, "b-later", 104, 15), 100);
  table.Apply(Acquire(10, "c-earlier", 103, 9), 100);
  table.Apply(Acquire(20, "other", 200), 100);
  table.Apply(Acquire(30, "quiet", 102, 0), 100);
  CHECK(table.NextExpiration() == 101);
  auto expired = table.TakeExpired(150);
  REQUIRE(expired.size() == 2);
  CHECK(expired[0].pid == 10);
  CHECK(expired[0].scope_id == "c-earlier");
  CHECK(expired[0].signal == 9);
  CHECK(expired[0].allowed_seconds == 3);
  CHECK(expired[1].pid == 30);
  CHECK(expired[1].signal == 0);  // expired, nobody to kill
  // Every timer of a reaped pid is gone; the other pid's stays.
  CHECK(table.size() == 1);
  CHECK(table.NextExpiration() == 200);
}

TEST_CASE("TimerTable forgets the timers of a pid that exited", "[launcher][watchdog]") {
  TimerTable table;
  table.Apply(Acquire(10, "a", 101), 100);
  table.Apply(Acquire(10, "b", 102), 100);
  table.Apply(Acquire(11, "a", 103), 100);
  table.DropPid(10);
  CHECK(table.size() == 1);
  CHECK(table.NextExpiration() == 103);
}

}  // namespace cpplaunch
