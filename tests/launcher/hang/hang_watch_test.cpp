// HangWatch on a real loop, reading /proc for a real process (this test process, idle while the
// loop waits): the hang is declared after the timeout, output lines put it off, and stderr is
// kept once it is declared.

#include "launcher/hang/hang_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::vector<LiveWorker> Self() { return {LiveWorker{0, ::getpid()}}; }

// An idle worker: a child blocked in pause() until the test ends. Not this test process, whose
// own sampling of /proc costs CPU time: under ASan on a loaded machine that passed the 2 % of a
// CPU that counts as busy, and put the hang off by ticks (1.43 s against a bound of 1.1 s, once
// in sanitized_unit_tests).
class IdleChild {
 public:
  IdleChild() : pid_(::fork()) {
    if (pid_ == 0) {
      ::pause();
      ::_exit(0);
    }
    REQUIRE(pid_ > 0);
  }
  ~IdleChild() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  IdleChild(const IdleChild&) = delete;
  IdleChild& operator=(const IdleChild&) = delete;
  std::vector<LiveWorker> Workers() const { return {LiveWorker{0, pid_}}; }

 private:
  pid_t pid_;
};

TEST_CASE("HangWatch: an idle worker is a hang after the timeout", "[agent][hang_watch]") {
  boost::asio::io_context io;
  const IdleChild idle;
  Clock::time_point fired{};
  HangWatch watch(
      io, 500ms, [&] { return idle.Workers(); }, [&] { fired = Clock::now(); });
  const Clock::time_point start = Clock::now();
  watch.Start();
  io.run_for(3s);
  REQUIRE(watch.hung());
  CHECK(fired - start >= 500ms);
  CHECK(fired - start < 500ms + HangWatch::Interval(500ms) + 500ms);
  watch.OnOutput(0, true, "Fatal Python error: Aborted\n");
  watch.OnOutput(0, false, "stdout is not kept\n");
  CHECK(watch.stderr_after_hang().at(0) == "Fatal Python error: Aborted\n");
}

TEST_CASE("HangWatch: output lines are progress", "[agent][hang_watch]") {
  boost::asio::io_context io;
  bool fired = false;
  HangWatch watch(io, 400ms, Self, [&] { fired = true; });
  watch.Start();
  boost::asio::steady_timer talker(io);
  const Clock::time_point until = Clock::now() + 1500ms;
  std::function<void()> talk = [&] {
    watch.OnOutput(0, false, "step\n");
    if (Clock::now() >= until) return;
    talker.expires_after(50ms);
    talker.async_wait([&](const boost::system::error_code&) { talk(); });
  };
  talk();
  io.run_for(1500ms);
  CHECK_FALSE(fired);
  CHECK(watch.stderr_after_hang().empty());  // nothing is kept before a hang
  watch.Stop();
}

TEST_CASE("HangWatch: Stalled, and Declare for another host's hang", "[agent][hang_watch]") {
  boost::asio::io_context io;
  HangWatch watch(io, 10s, Self, [] {});
  watch.Start();
  CHECK_FALSE(watch.Stalled(1s));
  CHECK(watch.Stalled(0ms));
  watch.Declare();
  CHECK(watch.hung());
  CHECK_FALSE(watch.Stalled(0ms));  // no longer watching
  watch.OnOutput(3, true, "Stack (most recent call first):\n");
  CHECK(watch.stderr_after_hang().count(3) == 1);
}

TEST_CASE("HangWatch: the tick interval", "[agent][hang_watch]") {
  CHECK(HangWatch::Interval(5s) == 1s);
  CHECK(HangWatch::Interval(200ms) == 100ms);
  CHECK(HangWatch::Interval(3600s) == 30s);
}

}  // namespace
}  // namespace cpplaunch
