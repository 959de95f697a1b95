#include <algorithm>
#include <stdexcept>

#include "rendezvous/core/rendezvous.h"

namespace cpplaunch {

const RoundPeer* RendezvousResult::Find(int rank) const {
  auto it = std::lower_bound(members.begin(), members.end(), rank,
                             [](const RoundPeer& m, int r) { return m.group_rank < r; });
  return it != members.end() && it->group_rank == rank ? &*it : nullptr;
}

const RoundPeer& RendezvousResult::Member(int rank) const {
  const RoundPeer* member = Find(rank);
  if (member == nullptr) {
    throw std::out_of_range("group rank " + std::to_string(rank) + " is not a known member");
  }
  return *member;
}

void SetEveryMember(RendezvousResult* result, std::vector<NodeInfo> nodes,
                    const std::vector<std::string>& liveness_keys) {
  result->members.clear();
  result->group_size = static_cast<int>(nodes.size());
  result->base_rank = 0;
  result->world_size = 0;
  for (size_t rank = 0; rank < nodes.size(); ++rank) {
    if (static_cast<int>(rank) < result->group_rank)
      result->base_rank += nodes[rank].local_world_size;
    result->world_size += nodes[rank].local_world_size;
    result->members.push_back(
        RoundPeer{static_cast<int>(rank), std::move(nodes[rank]), liveness_keys.at(rank)});
  }
}

}  // namespace cpplaunch
