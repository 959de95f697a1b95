#pragma once
// What GET /healthz and GET /readyz answer (docs/status.md). Pure.
//
// Liveness (Kubernetes restarts a pod that fails it): the agent answers, which alone proves its
// loop turns; while workers run and --hang-timeout is set, their progress must also be recent:
// the hang watch's rule (launcher/hang/progress_rule.h: an output line, or every worker busy),
// judged over the requests' own samples, so that nothing is sampled while nobody asks. A job
// that stalls for the hang window turns 503 until the hang's teardown and restart.
// Readiness: the round is complete and this host's workers run.

#include <chrono>
#include <optional>
#include <string>

#include "launcher/status/job_status.h"

namespace cpplaunch {

struct HealthAnswer {
  bool ok = true;
  std::string line;  // "ok", "ready", or the reason it is not
};

// `stalled_for`: how long the workers have shown no progress (zero when not tracked);
// `window`: --hang-timeout (none: progress is not judged).
HealthAnswer Liveness(const JobStatus& status, std::optional<std::chrono::milliseconds> window,
                      std::chrono::milliseconds stalled_for);
HealthAnswer Readiness(const JobStatus& status);

}  // namespace cpplaunch
