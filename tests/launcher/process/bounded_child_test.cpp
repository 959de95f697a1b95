// RunInBoundedChild with real forked children: an answer comes back, a child that blocks is
// killed at the deadline, a crash or an exception is reported as such, and nothing the child
// does reaches the caller.

#include "launcher/process/bounded_child.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using Status = BoundedChildResult::Status;

TEST_CASE("bounded child: the body's text comes back", "[bounded_child]") {
  const pid_t caller = ::getpid();
  const BoundedChildResult result =
      RunInBoundedChild([caller] { return ::getpid() != caller ? "ran elsewhere" : "here"; }, 5s);
  CHECK(result.status == Status::kDone);
  CHECK(result.output == "ran elsewhere");
}

TEST_CASE("bounded child: an empty answer is still an answer", "[bounded_child]") {
  const BoundedChildResult result = RunInBoundedChild([] { return std::string(); }, 5s);
  CHECK(result.status == Status::kDone);
  CHECK(result.output.empty());
}

TEST_CASE("bounded child: a body that blocks is killed at the deadline", "[bounded_child]") {
  const auto start = std::chrono::steady_clock::now();
  const BoundedChildResult result = RunInBoundedChild(
      [] {
        std::this_thread::sleep_for(60s);
        return std::string("too late");
      },
      500ms);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(result.status == Status::kTimedOut);
  CHECK(result.output.empty());
  CHECK(took >= 500ms);
  CHECK(took < 3s);
}

TEST_CASE("bounded child: a crash or an exception is no answer", "[bounded_child]") {
  CHECK(RunInBoundedChild(
            [] {
              ::raise(SIGSEGV);
              return std::string("unreachable");
            },
            5s)
            .status == Status::kDied);
  CHECK(RunInBoundedChild([]() -> std::string { throw std::runtime_error("no"); }, 5s).status ==
        Status::kDied);
  CHECK(RunInBoundedChild([]() -> std::string { std::exit(0); }, 5s).status == Status::kDied);
}

TEST_CASE("bounded child: what the child changes stays in the child", "[bounded_child]") {
  ::unsetenv("CPPLAUNCH_BOUNDED_CHILD_TEST");
  const BoundedChildResult result = RunInBoundedChild(
      [] {
        ::setenv("CPPLAUNCH_BOUNDED_CHILD_TEST", "1", 1);
        return std::string("set");
      },
      5s);
  CHECK(result.status == Status::kDone);
  CHECK(::getenv("CPPLAUNCH_BOUNDED_CHILD_TEST") == nullptr);
}

}  // namespace
}  // namespace cpplaunch
