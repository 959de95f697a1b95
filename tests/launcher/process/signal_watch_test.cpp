#include "launcher/process/signal_watch.h"

#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include "process_test_util.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

struct sigaction CurrentAction(int signo) {
  struct sigaction action {};
  ::sigaction(signo, nullptr, &action);
  return action;
}

TEST_CASE("SignalWatch delivers handled signals on the loop and restores defaults",
          "[launcher][signals]") {
  boost::asio::io_context io;
  std::vector<int> seen;
  {
    SignalWatch watch(io, {SIGUSR1, SIGUSR2}, [&](int signo) { seen.push_back(signo); });
    CHECK((CurrentAction(SIGUSR1).sa_flags & SA_RESTART) != 0);
    ::raise(SIGUSR1);
    ::raise(SIGUSR2);
    ::raise(SIGUSR1);  // delivered again: the watch re-arms
    CHECK(testing::RunUntil(
        io, [&] { return seen.size() == 3; }, 2s));
  }
  std::sort(seen.begin(), seen.end());  // asio counts per signal; order across signals varies
  CHECK(seen == std::vector<int>{SIGUSR1, SIGUSR1, SIGUSR2});
  CHECK(CurrentAction(SIGUSR1).sa_handler == SIG_DFL);
  testing::RunUntil(
      io, [] { return false; }, 20ms);  // cancelled waits complete harmlessly
}

}  // namespace
}  // namespace cpplaunch
