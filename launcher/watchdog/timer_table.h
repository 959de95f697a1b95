#pragma once
// The watchdog's timers, as torch's FileTimerServer keeps them: one per (worker pid, scope),
// set by an acquire and removed by a release. When timers expire, each pid is reaped once, with
// the signal of its earliest-expiring timer that has one (> 0); a pid whose expired timers have
// no signal is not killed. Either way every timer of that pid is dropped.
// Pure: times are wall-clock seconds since the epoch, passed in by the caller (the protocol's
// expiration times are time.time() values). Not thread-safe.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/watchdog/timer_request.h"

namespace cpplaunch {

// A timer that ran out, chosen to reap its pid.
struct TimerExpiry {
  int pid = 0;
  std::string scope_id;
  int signal = 0;              // 0: expired without a signal, nobody is killed
  double allowed_seconds = 0;  // expiration time minus the time the acquire arrived
  double expiration_time = 0;  // as the worker sent it (epoch seconds)
};

class TimerTable {
 public:
  // Acquire (sets or replaces the pid's timer for that scope) or release (removes it).
  void Apply(const TimerRequest& request, double now);
  // The earliest expiration time of all timers; nullopt when there is none.
  std::optional<double> NextExpiration() const;
  // The expiry chosen for each pid with a timer at or before `now`, in pid order; drops every
  // timer of those pids.
  std::vector<TimerExpiry> TakeExpired(double now);
  // Forgets the timers of a pid that exited.
  void DropPid(int pid);
  void Clear() { timers_.clear(); }
  std::size_t size() const { return timers_.size(); }

 private:
  struct Timer {
    double expiration_time = 0;
    int signal = 0;
    double acquired_at = 0;
  };
  std::map<std::pair<int, std::string>, Timer> timers_;
};

}  // namespace cpplaunch
