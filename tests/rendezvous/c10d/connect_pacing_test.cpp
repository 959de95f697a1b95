#include "rendezvous/c10d/connect_pacing.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = ConnectPacing::Clock;

TEST_CASE("fast failures back off, doubling up to a second") {
  const Clock::time_point t0{};
  ConnectPacing pacing(t0, seconds(5));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(50));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(100));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(200));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(400));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(800));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(1000));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(1000));
}

TEST_CASE("a slow failure needs no pause and restarts the backoff") {
  const Clock::time_point t0{};
  ConnectPacing pacing(t0, seconds(5));
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(50));
  CHECK(pacing.PauseAfterFailure(t0, t0 + seconds(5)) == Clock::duration::zero());
  CHECK(pacing.PauseAfterFailure(t0, t0 + milliseconds(1)) == milliseconds(50));
}

TEST_CASE("progress lines come at most once per interval") {
  const Clock::time_point t0{};
  ConnectPacing pacing(t0, seconds(5));
  CHECK_FALSE(pacing.ShouldReport(t0 + milliseconds(10)));
  CHECK_FALSE(pacing.ShouldReport(t0 + milliseconds(4999)));
  CHECK(pacing.ShouldReport(t0 + seconds(5)));
  CHECK_FALSE(pacing.ShouldReport(t0 + seconds(6)));
  CHECK(pacing.ShouldReport(t0 + seconds(10)));
}

TEST_CASE("a peer that keeps closing without a word is given up on; other failures reset") {
  ConnectPacing pacing(Clock::time_point{}, seconds(5));
  for (int i = 1; i < ConnectPacing::kSilentClosesToGiveUp; ++i) CHECK_FALSE(pacing.SilentClose());
  pacing.OtherFailure();
  CHECK(pacing.silent_closes() == 0);
  for (int i = 1; i < ConnectPacing::kSilentClosesToGiveUp; ++i) CHECK_FALSE(pacing.SilentClose());
  CHECK(pacing.SilentClose());
}

}  // namespace
}  // namespace cpplaunch
