#include "launcher/watchdog/timer_table.h"

#include <algorithm>

namespace cpplaunch {

void TimerTable::Apply(const TimerRequest& request, double now) {
  auto key = std::make_pair(request.pid, request.scope_id);
  if (request.release()) {
    timers_.erase(key);
    return;
  }
  timers_[key] = Timer{request.expiration_time, request.signal, now};
}

std::optional<double> TimerTable::NextExpiration() const {
  std::optional<double> next;
  for (const auto& [key, timer] : timers_) {
    if (!next || timer.expiration_time < *next) next = timer.expiration_time;
  }
  return next;
}

std::vector<TimerExpiry> TimerTable::TakeExpired(double now) {
  // pid -> the expired timer that reaps it: the earliest with a signal, else the earliest.
  std::map<int, std::pair<const std::string*, const Timer*>> chosen;
  for (const auto& [key, timer] : timers_) {
    if (timer.expiration_time > now) continue;
    auto [it, fresh] = chosen.try_emplace(key.first, &key.second, &timer);
    if (fresh) continue;
    const Timer& best = *it->second.second;
    const bool better = (timer.signal > 0) != (best.signal > 0)
                            ? timer.signal > 0
                            : timer.expiration_time < best.expiration_time;
    if (better) it->second = {&key.second, &timer};
  }
  std::vector<TimerExpiry> expired;
  for (const auto& [pid, choice] : chosen) {
    const Timer& timer = *choice.second;
    expired.push_back(TimerExpiry{pid, *choice.first, std::max(timer.signal, 0),
                                  timer.expiration_time - timer.acquired_at,
                                  timer.expiration_time});
  }
  for (const TimerExpiry& expiry : expired) DropPid(expiry.pid);
  return expired;
}

void TimerTable::DropPid(int pid) {
  auto first = timers_.lower_bound(std::make_pair(pid, std::string()));
  auto last = first;
  while (last != timers_.end() && last->first.first == pid) ++last;
  timers_.erase(first, last);
}

}  // namespace cpplaunch
