#include "launcher/hang/hang_setup.h"

#include <algorithm>
#include <string>

namespace cpplaunch {
namespace {

void ThroughAgent(StreamRoute& route, std::filesystem::path& log) {
  if (route != StreamRoute::kInherit) return;
  route = StreamRoute::kTee;
  log.clear();  // console only, as the inherited stream was
}

}  // namespace

void PrepareForHangWatch(WorkerSpec& spec) {
  const bool user_set = std::any_of(spec.env.begin(), spec.env.end(), [](const std::string& e) {
    return e.rfind("PYTHONFAULTHANDLER=", 0) == 0;
  });
  if (!user_set) spec.env.push_back("PYTHONFAULTHANDLER=1");
  WorkerStreams& streams = spec.streams;
  // One prefix serves both streams: a stream that was tee'd keeps it (and so does the other,
  // now tee'd too); otherwise the lines stay as unprefixed as the inherited streams were.
  const bool teed =
      streams.stdout_route == StreamRoute::kTee || streams.stderr_route == StreamRoute::kTee;
  if (!teed) streams.prefix.clear();
  ThroughAgent(streams.stdout_route, streams.stdout_log);
  ThroughAgent(streams.stderr_route, streams.stderr_log);
}

}  // namespace cpplaunch
