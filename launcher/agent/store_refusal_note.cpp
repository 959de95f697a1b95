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

void StoreRefusalNote::OnAgentEnded(const AgentEnded& ended) {
  if (store_ == nullptr || ended.decided == ExitCode::kSuccess) return;
  if (auto note = RefusedHandshakesNote(store_->counters())) console_.Say(*note);
}

}  // namespace cpplaunch
