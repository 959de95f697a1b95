#include "rendezvous/core/waiting_line.h"

#include <algorithm>

#include "base/text.h"
#include "rendezvous/core/node_info.h"

namespace cpplaunch {
namespace {

std::string ListNodes(const std::vector<std::string>& ids, size_t total) {
  std::string text;
  const size_t shown = std::min<size_t>(ids.size(), 8);
  for (size_t i = 0; i < shown; ++i) text += (i ? ", " : "") + ids[i];
  if (total > shown) text += ", ... (" + std::to_string(total - shown) + " more)";
  return text;
}

}  // namespace

std::string WaitingLine(const RendezvousState& state, const WaitingView& view) {
  const int joined = view.joined >= 0 ? view.joined : static_cast<int>(state.participants.size());
  std::string line = "waiting for hosts of job '" + std::string(view.run_id) + "' (round " +
                     std::to_string(state.round) +
                     ", --nnodes=" + NnodesText(state.min_nodes, state.max_nodes) + ") at " +
                     std::string(view.where) + ": ";
  if (state.complete) {
    line += "the job is running with " + std::to_string(joined) + " host(s); ";
    line += state.IsWaiting(view.self_id) ? "this host joins at its next restart; "
                                          : "it is full, this host waits for a free place; ";
  } else {
    line += std::to_string(joined) + " joined [" +
            ListNodes(state.participants, static_cast<size_t>(joined)) + "]; ";
    // A summary carries no seats: only a host that read the whole state gets here.
    if (!state.seats.empty() && state.RankOf(view.self_id) < 0) {
      line += "the free places are taken (the others keep theirs), this host waits as a spare; ";
    } else if (joined < state.min_nodes) {
      line += "need " + std::to_string(state.min_nodes - joined) + " more to start; ";
    } else if (state.last_call_deadline_ms != 0) {
      line += "starting with " + std::to_string(joined) + " in " +
              FormatSeconds(view.last_call_left) + " unless " +
              std::to_string(state.max_nodes - joined) + " more join first; ";
    }
  }
  line += "join timeout in " + FormatSeconds(view.join_left);
  return line;
}

}  // namespace cpplaunch
