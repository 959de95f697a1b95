#include "rendezvous/c10d/write_turn.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace cpplaunch {

boost::asio::awaitable<int64_t> WriteTurn::Take(Clock::time_point deadline) {
  constexpr auto kSlice = std::chrono::milliseconds(100);
  const int64_t ticket = co_await client_.Add(keys_.Ticket(), 1);
  int64_t passed_seen = -1;
  auto moved_at = Clock::now();
  int64_t place = ticket - 1;  // turns ahead of this one not yet passed (as last seen)
  while (ticket > 1 && Clock::now() < deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    // A host far back in the queue looks at it less often: N waiters polling at one rate load
    // the store with O(N) requests a slice (at 2,000 hosts, 100 ms slices made it 4x slower).
    const auto slice = std::min<std::chrono::milliseconds>(kSlice * place, kTurnWait);
    std::vector<std::string> keys{keys_.Turn(ticket)};
    if (co_await client_.Wait(std::move(keys),
                              std::clamp(left, std::chrono::milliseconds(1), slice))) {
      break;
    }
    const int64_t passed = co_await client_.Add(keys_.Passed(), 0);
    place = std::max<int64_t>(ticket - passed - 1, 1);  // 1: next after the holder
    if (passed != passed_seen) {
      passed_seen = passed;
      moved_at = Clock::now();
      continue;
    }
    if (Clock::now() - moved_at >= kTurnWait * place) {
      co_await client_.Add(keys_.Passed(), ticket - 1 - passed);  // the stuck turns count as passed
      break;
    }
  }
  co_return ticket;
}

boost::asio::awaitable<int64_t> WriteTurn::Pass(int64_t ticket) {
  co_await client_.Set(keys_.Turn(ticket + 1), "");
  co_await client_.Add(keys_.Passed(), 1);
  co_return kTurnPassed;
}

}  // namespace cpplaunch
