#include "launcher/journal/slot_change_note.h"

#include <algorithm>

namespace cpplaunch {
namespace {

const RoundPeer* WithId(const std::vector<RoundPeer>& peers, const std::string& node_id) {
  auto it = std::find_if(peers.begin(), peers.end(),
                         [&](const RoundPeer& peer) { return peer.node.node_id == node_id; });
  return it == peers.end() ? nullptr : &*it;
}

const RoundPeer* AtRank(const std::vector<RoundPeer>& peers, int group_rank) {
  auto it = std::find_if(peers.begin(), peers.end(),
                         [&](const RoundPeer& peer) { return peer.group_rank == group_rank; });
  return it == peers.end() ? nullptr : &*it;
}

}  // namespace

std::vector<std::string> SlotChangeLines(const std::vector<RoundPeer>& before, int before_size,
                                         const std::vector<RoundPeer>& after, int group_world_size,
                                         int64_t round) {
  std::vector<std::string> lines;
  const bool complete = before_size > 0 && static_cast<int>(before.size()) == before_size &&
                        static_cast<int>(after.size()) == group_world_size;
  if (!complete) return lines;
  const std::string prefix = "round " + std::to_string(round) + ": ";
  int moved = 0;
  for (const RoundPeer& peer : after) {
    if (const RoundPeer* known = WithId(before, peer.node.node_id)) {
      moved += known->group_rank != peer.group_rank ? 1 : 0;
      continue;
    }
    const RoundPeer* previous = AtRank(before, peer.group_rank);
    std::string line =
        prefix + peer.node.Label() + " took group rank " + std::to_string(peer.group_rank);
    if (previous != nullptr && WithId(after, previous->node.node_id) == nullptr) {
      line += ", the slot of " + previous->node.Label();
    } else {
      line += ", a new slot";
    }
    lines.push_back(line);
  }
  if (moved > 0) {
    lines.push_back(prefix + std::to_string(moved) + " of the last round's hosts changed group " +
                    "rank: their workers' RANKs moved");
  }
  return lines;
}

void SlotChangeNote::OnAttemptStarting(const Round& round) {
  // A restart within the same round (a single host) or the same membership says nothing new.
  if (round.round != last_round_) {
    for (const std::string& line : SlotChangeLines(last_hosts_, last_size_, round.hosts,
                                                   round.layout.group_world_size, round.round)) {
      console_.Say(line);
    }
  }
  last_hosts_ = round.hosts;
  last_size_ = round.layout.group_world_size;
  last_round_ = round.round;
}

}  // namespace cpplaunch
