#pragma once
// The store's host names what its store refused when its run fails (issue 23), once, in the
// run's last lines, not only in the rate-limited refusals logged long before:
//   - agent handshakes: with mismatched secrets the other hosts are refused at once, while the
//     store's host waits for them until its timeout;
//   - requests over the memory budget: a store kept full makes an agent's write fail, the store
//     closes that agent's connection, and the job then reports a healthy host as lost.
// A listener of the agent's end (agent_events.h). Threads: the agent's loop thread.

#include <optional>
#include <string>

#include "launcher/job/agent_events.h"
#include "launcher/report/agent_console.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {

// Pure: the line for `counters` of a run that failed; nullopt when no handshake was refused.
std::optional<std::string> RefusedHandshakesNote(const StoreCounters& counters);
// Pure: the line for `counters` of a run that failed; nullopt when no request was refused for
// the memory budget.
std::optional<std::string> BudgetRefusalsNote(const StoreCounters& counters);

class StoreRefusalNote final : public AgentListener {
 public:
  // `store` (this agent's, may be null: another host serves it) and `console` outlive it.
  StoreRefusalNote(const StoreServer* store, AgentConsole& console)
      : store_(store), console_(console) {}

  void OnAgentEnded(const AgentEnded& ended) override;

 private:
  const StoreServer* store_;
  AgentConsole& console_;
};

}  // namespace cpplaunch
