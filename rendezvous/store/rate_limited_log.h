#pragma once
// At most one line per interval for a kind of event that a stranger can repeat at will (refused
// connections, refused agent handshakes), so that stderr cannot be flooded; the lines held back
// are counted in the next one. Pure: the caller passes the time and prints what it gets.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace cpplaunch {

class RateLimitedLog {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RateLimitedLog(Clock::duration interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // The line to print now (`line`, plus "; N more like it since" when some were held back), or
  // nullopt when one was printed less than an interval ago.
  std::optional<std::string> Admit(Clock::time_point now, const std::string& line);

 private:
  Clock::duration interval_;
  std::optional<Clock::time_point> last_;
  uint64_t held_back_ = 0;
};

}  // namespace cpplaunch
