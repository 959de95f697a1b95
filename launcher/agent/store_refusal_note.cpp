#include "launcher/agent/store_refusal_note.h"

namespace cpplaunch {

std::optional<std::string> RefusedHandshakesNote(const StoreCounters& counters) {
  if (counters.refused_handshakes == 0) return std::nullopt;
  const uint64_t count = counters.refused_handshakes;
  return "this host's store refused " + std::to_string(count) + " agent handshake" +
         (count == 1 ? "" : "s") + " (the last from " + counters.last_refused_peer +
         "): those hosts have another secret_file, or none; every host of the job needs the same "
         "secret (docs/security.md)";
}

std::optional<std::string> BudgetRefusalsNote(const StoreCounters& counters) {
  const uint64_t count = counters.budget_refusals;
  if (count == 0) return std::nullopt;
  const uint64_t agents = counters.agent_budget_refusals;
  std::string line = "this host's store refused " + std::to_string(count) + " request" +
                     (count == 1 ? "" : "s") + " over its memory budget";
  if (agents > 0) {
    line += ", " + std::to_string(agents) +
            " of them from an agent (the last: " + counters.budget_refusal +
            "); the store closes the connection of an agent it refuses, so a host reported "
            "lost may be healthy";
  } else {
    line += " (the first: " + counters.budget_refusal + ")";
  }
  return line +
         "; raise store_max_bytes in --rdzv-conf, or find what fills the store "
         "(docs/store_protocol.md)";
}

void StoreRefusalNote::OnAgentEnded(const AgentEnded& ended) {
  if (store_ == nullptr || ended.decided == ExitCode::kSuccess) return;
  const StoreCounters counters = store_->counters();
  if (auto note = RefusedHandshakesNote(counters)) console_.Say(*note);
  if (auto note = BudgetRefusalsNote(counters)) console_.Say(*note);
}

}  // namespace cpplaunch
