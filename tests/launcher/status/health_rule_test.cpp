#include "launcher/status/health_rule.h"

#include <catch2/catch.hpp>

namespace cpplaunch {

using std::chrono::milliseconds;

TEST_CASE("Liveness: the agent answering is enough without --hang-timeout") {
  JobStatus status;
  status.phase = AgentPhase::kRunning;
  CHECK(Liveness(status, std::nullopt, milliseconds(3'600'000)).ok);
}

TEST_CASE("Liveness: running workers without progress for the hang window are unhealthy") {
  JobStatus status;
  status.phase = AgentPhase::kRunning;
  CHECK(Liveness(status, milliseconds(10'000), milliseconds(9'999)).ok);
  const HealthAnswer stalled = Liveness(status, milliseconds(10'000), milliseconds(12'000));
  CHECK_FALSE(stalled.ok);
  CHECK(stalled.line == "no progress from the workers for 12 s (--hang-timeout 10 s)");
  // Between attempts nothing is expected to progress.
  status.phase = AgentPhase::kRendezvous;
  CHECK(Liveness(status, milliseconds(10'000), milliseconds(60'000)).ok);
}

TEST_CASE("Readiness: only while this host's workers run") {
  JobStatus status;
  CHECK_FALSE(Readiness(status).ok);
  CHECK(Readiness(status).line == "waiting for the rendezvous round 0");
  status.phase = AgentPhase::kRunning;
  CHECK(Readiness(status).ok);
  status.phase = AgentPhase::kConcluding;
  CHECK_FALSE(Readiness(status).ok);
  status.phase = AgentPhase::kDone;
  CHECK(Readiness(status).line == "the job is over on this host");
}

}  // namespace cpplaunch
