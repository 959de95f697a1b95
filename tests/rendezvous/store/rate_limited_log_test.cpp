#include "rendezvous/store/rate_limited_log.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

TEST_CASE("RateLimitedLog lets one line through per interval and counts the rest",
          "[rendezvous][log]") {
  RateLimitedLog log(10s);
  const auto start = RateLimitedLog::Clock::time_point{} + 1h;
  CHECK(log.Admit(start, "refused a") == "refused a");
  CHECK_FALSE(log.Admit(start + 1s, "refused b"));
  CHECK_FALSE(log.Admit(start + 9s, "refused c"));
  CHECK(log.Admit(start + 10s, "refused d") ==
        "refused d (and 2 more since the last such message)");
  CHECK(log.Admit(start + 25s, "refused e") == "refused e");
}

}  // namespace
}  // namespace cpplaunch
