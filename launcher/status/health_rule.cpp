#include "launcher/status/health_rule.h"

#include "base/text.h"

namespace cpplaunch {

HealthAnswer Liveness(const JobStatus& status, std::optional<std::chrono::milliseconds> window,
                      std::chrono::milliseconds stalled_for) {
  if (status.phase == AgentPhase::kRunning && window && stalled_for >= *window) {
    return {false, "no progress from the workers for " + FormatSeconds(stalled_for) +
                       " (--hang-timeout " + FormatSeconds(*window) + ")"};
  }
  return {true, "ok"};
}

HealthAnswer Readiness(const JobStatus& status) {
  switch (status.phase) {
    case AgentPhase::kRunning:
      return {true, "ready"};
    case AgentPhase::kRendezvous:
      return {false, "waiting for the rendezvous round " + std::to_string(status.round) +
                         (status.restarts_used > 0 ? " after a restart" : "")};
    case AgentPhase::kConcluding:
      return {false, "the workers ended; the agent decides what follows"};
    case AgentPhase::kDone:
      return {false, "the job is over on this host"};
  }
  return {false, "unknown"};
}

}  // namespace cpplaunch
