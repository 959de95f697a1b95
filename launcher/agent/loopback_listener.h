#pragma once
// The listener for a host name that resolves to a loopback address in a job across hosts
// (launcher/diagnosis/loopback_hint.h): at the first attempt it warns, with the fix, when this
// host's workers would advertise a loopback address to the others; after a final failure whose
// workers' texts hold gloo's refused connect to a loopback address, it names the cause again.
// Threads: the agent's loop thread. Resolves the host name once (blocking, the resolver), and
// only for a job whose round has other hosts.

#include <memory>
#include <optional>

#include "launcher/diagnosis/loopback_hint.h"
#include "launcher/job/agent_events.h"
#include "launcher/multihost/host_name.h"
#include "launcher/output/log_dir.h"
#include "launcher/report/agent_console.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class LoopbackListener final : public AgentListener {
 public:
  // Everything given must outlive the listener.
  LoopbackListener(const EnvMap& env, AgentConsole& console, const LogDir& logs,
                   std::shared_ptr<HostName> host);

  void OnAttemptStarting(const Round& round) override;
  void OnDecision(const AttemptDecided& decided) override;

 private:
  const EnvMap& env_;
  AgentConsole& console_;
  const LogDir& logs_;
  std::shared_ptr<HostName> host_;
  std::optional<LoopbackFacts> facts_;  // learnt at the first attempt of a job across hosts
};

}  // namespace cpplaunch
