#include "launcher/journal/slot_change_note.h"

#include "base/text.h"
#include "launcher/journal/slot_changes.h"

namespace cpplaunch {
std::vector<std::string> SlotChangeLines(const std::vector<RoundPeer>& before, int before_size,
                                         const std::vector<RoundPeer>& after, int group_world_size,
                                         int64_t round, const std::vector<std::string>& set_aside) {
  const SlotChanges changes =
      CompareRounds(before, before_size, after, group_world_size, set_aside);
  const std::string prefix = "round " + std::to_string(round) + ": ";
  std::vector<std::string> lines;
  for (const SlotTaken& taken : changes.taken) {
    std::string line = prefix + taken.host + " took group rank " + std::to_string(taken.group_rank);
    if (taken.replaced.empty()) {
      line += ", a new slot";
    } else {
      line += ", the slot of " + taken.replaced;
      if (taken.replaced_set_aside) line += ", which is set aside for the rest of the job";
    }
    lines.push_back(line);
  }
  if (changes.moved > 0) {
    lines.push_back(prefix + std::to_string(changes.moved) +
                    " of the last round's hosts changed group rank: their workers' RANKs moved");
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
