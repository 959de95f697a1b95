#pragma once
// GET /metrics: the job as Prometheus' text exposition format (version 0.0.4) reads it, named
// after Prometheus' conventions: the cpplaunch_ prefix, base units (seconds, bytes), _total on
// counters, one HELP and TYPE line per family. Pure.
//
//   cpplaunch_info{run_id,backend,hostname}            1
//   cpplaunch_agent_state{state}                       1 for the agent's phase, 0 for the others
//   cpplaunch_restarts_total, cpplaunch_max_restarts
//   cpplaunch_rendezvous_rounds_total
//   cpplaunch_rendezvous_duration_seconds              histogram of the rounds' durations
//   cpplaunch_workers_running
//   cpplaunch_worker_resident_memory_bytes{local_rank,rank}
//   cpplaunch_worker_cpu_seconds_total{local_rank,rank}    its process tree's CPU time
//   cpplaunch_worker_last_output_age_seconds{local_rank,rank}  since its last output (or start)
//   cpplaunch_store_requests_total, cpplaunch_store_refused_total, cpplaunch_store_connections,
//   cpplaunch_store_keys, cpplaunch_store_budget_used_bytes, cpplaunch_store_budget_bytes
//                                                      (only on the host that serves the store)

#include <string>

#include "launcher/status/job_status.h"

namespace cpplaunch {

// The bucket bounds of cpplaunch_rendezvous_duration_seconds, in seconds.
inline constexpr double kRendezvousBuckets[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300};

std::string MetricsText(const JobStatus& status, double now);

// A label value as the format escapes it: backslash, double quote and newline.
std::string EscapeLabel(const std::string& value);

}  // namespace cpplaunch
