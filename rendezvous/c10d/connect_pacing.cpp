#include "rendezvous/c10d/connect_pacing.h"

#include <algorithm>

namespace cpplaunch {

ConnectPacing::Clock::duration ConnectPacing::PauseAfterFailure(Clock::time_point began,
                                                                Clock::time_point now) {
  if (now - began >= kLongestPause) {
    pause_ = Clock::duration::zero();
    return pause_;
  }
  pause_ = pause_ == Clock::duration::zero() ? Clock::duration(kFirstPause)
                                             : std::min<Clock::duration>(pause_ * 2, kLongestPause);
  return pause_;
}

bool ConnectPacing::ShouldReport(Clock::time_point now) {
  if (now - last_report_ < report_every_) return false;
  last_report_ = now;
  return true;
}

}  // namespace cpplaunch
