#include "launcher/journal/slot_changes.h"

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

// `peer` took its slot from `previous` (nullptr: a new slot).
SlotTaken Taken(const RoundPeer& peer, const RoundPeer* previous,
                const std::vector<std::string>& set_aside) {
  SlotTaken taken;
  taken.group_rank = peer.group_rank;
  taken.host = peer.node.Label();
  taken.node_id = peer.node.node_id;
  if (previous != nullptr) {
    taken.replaced = previous->node.Label();
    taken.replaced_node_id = previous->node.node_id;
    taken.replaced_set_aside =
        std::find(set_aside.begin(), set_aside.end(), previous->node.node_id) != set_aside.end();
  }
  return taken;
}

}  // namespace

SlotChanges CompareRounds(const std::vector<RoundPeer>& before, int before_size,
                          const std::vector<RoundPeer>& after, int group_world_size,
                          const std::vector<std::string>& set_aside) {
  SlotChanges changes;
  const bool complete = before_size > 0 && static_cast<int>(before.size()) == before_size &&
                        static_cast<int>(after.size()) == group_world_size;
  if (!complete) {
    // Partial lists (a round of more than 8 hosts): only a round of the same size is compared,
    // rank by rank. Stable seats then moved no host, so a rank whose holder changed was taken by
    // a newcomer from a host that is gone.
    if (before_size != group_world_size) return changes;
    for (const RoundPeer& peer : after) {
      const RoundPeer* previous = AtRank(before, peer.group_rank);
      if (previous == nullptr || previous->node.node_id == peer.node.node_id) continue;
      changes.taken.push_back(Taken(peer, previous, set_aside));
    }
    return changes;
  }
  for (const RoundPeer& peer : after) {
    if (const RoundPeer* known = WithId(before, peer.node.node_id)) {
      changes.moved += known->group_rank != peer.group_rank ? 1 : 0;
      continue;
    }
    const RoundPeer* previous = AtRank(before, peer.group_rank);
    const bool gone = previous != nullptr && WithId(after, previous->node.node_id) == nullptr;
    changes.taken.push_back(Taken(peer, gone ? previous : nullptr, set_aside));
  }
  return changes;
}

}  // namespace cpplaunch
