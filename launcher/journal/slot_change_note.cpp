#include "launcher/journal/slot_change_note.h"

#include <algorithm>

#include "base/text.h"

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
                                         int64_t round, const std::vector<std::string>& set_aside) {
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
      if (std::find(set_aside.begin(), set_aside.end(), previous->node.node_id) !=
          set_aside.end()) {
        line += ", which is set aside for the rest of the job";
      }
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

std::string SetAsideSummary(const std::vector<std::string>& set_aside,
                            const std::map<std::string, std::string>& labels) {
  if (set_aside.empty()) return "";
  std::vector<std::string> names;
  for (const std::string& id : set_aside) {
    auto known = labels.find(id);
    names.push_back(known != labels.end() ? known->second : id);
  }
  return "hosts set aside during the job (a spare took each one's place): " + Join(names, ", ");
}

void SlotChangeNote::OnAttemptStarting(const Round& round) {
  // A restart within the same round (a single host) or the same membership says nothing new.
  if (round.round != last_round_) {
    for (const std::string& line :
         SlotChangeLines(last_hosts_, last_size_, round.hosts, round.layout.group_world_size,
                         round.round, round.set_aside)) {
      console_.Say(line);
    }
  }
  for (const RoundPeer& peer : round.hosts) labels_[peer.node.node_id] = peer.node.Label();
  set_aside_ = round.set_aside;
  last_hosts_ = round.hosts;
  last_size_ = round.layout.group_world_size;
  last_round_ = round.round;
}

void SlotChangeNote::OnAgentEnded(const AgentEnded&) {
  if (std::string line = SetAsideSummary(set_aside_, labels_); !line.empty()) console_.Say(line);
}

}  // namespace cpplaunch
