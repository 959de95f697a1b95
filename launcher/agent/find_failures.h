#pragma once
// FindFailures: what went wrong in one attempt (FailureFindings, launcher/report/
// failure_findings.h), from the attempt's result, its OOM verdicts, the hang diagnosis and the
// workers' log and error files. Built once, then heard by every listener (agent_events.h).
// Threads: the agent's loop thread; reads files (error files, logs, PATH) but never throws.

#include <string>

#include "launcher/agent/attempt.h"
#include "launcher/cli/options.h"
#include "launcher/hang/hang_diagnosis.h"
#include "launcher/job/agent_events.h"
#include "launcher/output/log_dir.h"
#include "launcher/process/supervisor.h"
#include "launcher/report/failure_findings.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// The findings of `attempt`, which ended with `result`. `host` names this host in the records.
// `senders` says which signals the agent's own listeners sent (AgentListener::SignalSent).
FailureFindings FindFailures(const AttemptResult& result, bool final, const Attempt& attempt,
                             const HangDiagnosis& hang, const AgentListener& senders,
                             const LaunchOptions& options, const EnvMap& env,
                             const std::string& host, const LogDir& logs);

}  // namespace cpplaunch
