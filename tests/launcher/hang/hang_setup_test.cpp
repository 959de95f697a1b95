// What --hang-timeout changes in a worker's spec.

#include "launcher/hang/hang_setup.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

WorkerSpec Spec(StreamRoute out, StreamRoute err) {
  WorkerSpec spec;
  spec.env = {"PATH=/usr/bin"};
  spec.streams.prefix = "[default0]:";
  spec.streams.stdout_route = out;
  spec.streams.stderr_route = err;
  spec.streams.stdout_log = "/logs/0/stdout.log";
  spec.streams.stderr_log = "/logs/0/stderr.log";
  return spec;
}

TEST_CASE("PrepareForHangWatch: inherited streams pass through the agent unprefixed",
          "[agent][hang_setup]") {
  WorkerSpec spec = Spec(StreamRoute::kInherit, StreamRoute::kInherit);
  PrepareForHangWatch(spec);
  CHECK(spec.env == std::vector<std::string>{"PATH=/usr/bin", "PYTHONFAULTHANDLER=1"});
  CHECK(spec.streams.stdout_route == StreamRoute::kTee);
  CHECK(spec.streams.stderr_route == StreamRoute::kTee);
  CHECK(spec.streams.stdout_log.empty());
  CHECK(spec.streams.stderr_log.empty());
  CHECK(spec.streams.prefix.empty());
}

TEST_CASE("PrepareForHangWatch: files and tee'd streams stay; the user's faulthandler setting too",
          "[agent][hang_setup]") {
  WorkerSpec spec = Spec(StreamRoute::kTee, StreamRoute::kFile);
  spec.env.push_back("PYTHONFAULTHANDLER=");
  PrepareForHangWatch(spec);
  CHECK(spec.env.back() == "PYTHONFAULTHANDLER=");
  CHECK(spec.env.size() == 2);
  CHECK(spec.streams.stdout_route == StreamRoute::kTee);
  CHECK(spec.streams.stdout_log == "/logs/0/stdout.log");
  CHECK(spec.streams.stderr_route == StreamRoute::kFile);
  CHECK(spec.streams.prefix == "[default0]:");
}

}  // namespace
}  // namespace cpplaunch
