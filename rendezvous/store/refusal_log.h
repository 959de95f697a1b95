#pragma once
// RefusalLog: the store's host says one line per refused client (over the memory budget, a
// reply or watch limit), but no faster than one line a second, so a client that is refused in a
// loop cannot flood the console. Lines held back are counted and named in the next line.
// Pure: the caller passes the time. Not thread-safe (the server's loop thread).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace cpplaunch {

class RefusalLog {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kInterval{1};

  // The line to print for `line` at `now`, or nullopt when it is held back (counted).
  std::optional<std::string> Admit(std::string line, Clock::time_point now);
  uint64_t suppressed() const { return suppressed_; }

 private:
  std::optional<Clock::time_point> last_;
  uint64_t suppressed_ = 0;
};

}  // namespace cpplaunch
