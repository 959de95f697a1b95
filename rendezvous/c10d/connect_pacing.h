#pragma once
// How an agent's connect loop to the job's store paces itself. A connect that fails fast (a
// service that is not a store answers and hangs up at once) must not be retried in a tight loop
// with a progress line each time (about 950 lines per second for the whole rendezvous timeout,
// issue 13): fast failures back off, progress lines come at most every `report_every`, and a
// peer that keeps closing the connection without a word is given up on.
//
// Pure: the caller passes the times. Not thread-safe; one per connect loop.

#include <chrono>

namespace cpplaunch {

class ConnectPacing {
 public:
  using Clock = std::chrono::steady_clock;

  // Pauses between fast failures grow from kFirstPause, doubling, to kLongestPause.
  static constexpr std::chrono::milliseconds kFirstPause{50};
  static constexpr std::chrono::milliseconds kLongestPause{1000};
  // Handshakes closed by the peer without a byte, in a row, before the peer is given up on
  // (about 5 s of backoff: longer than a store at its connection limit stays there).
  static constexpr int kSilentClosesToGiveUp = 10;

  ConnectPacing(Clock::time_point start, Clock::duration report_every)
      : last_report_(start), report_every_(report_every) {}

  // A try that began at `began` failed at `now`: how long to wait before the next one. A try
  // that used kLongestPause or more (the client's own retries within it) needs no pause.
  Clock::duration PauseAfterFailure(Clock::time_point began, Clock::time_point now);

  // Whether to print a progress line at `now`: at most once per report_every, the first one
  // report_every after the start.
  bool ShouldReport(Clock::time_point now);

  // Counts a handshake the peer closed without answering (true: give up now); any other
  // outcome resets the count.
  bool SilentClose() { return ++silent_closes_ >= kSilentClosesToGiveUp; }
  void OtherFailure() { silent_closes_ = 0; }
  int silent_closes() const { return silent_closes_; }

 private:
  Clock::time_point last_report_;
  Clock::duration report_every_;
  Clock::duration pause_ = Clock::duration::zero();
  int silent_closes_ = 0;
};

}  // namespace cpplaunch
