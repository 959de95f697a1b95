#pragma once
// Which host took which slot (issue 24): when a round of a multi-host job gives a group rank to
// a host that was not in the previous round (a spare, or a replacement), every agent that knew
// both rounds' members says so in one line, e.g.
//   round 2: vm-e at 10.0.0.5 took group rank 1, the slot of vm-b at 10.0.0.2 (spare)
// and when surviving hosts changed group rank (no spare filled a lost slot, and the round was
// compacted, as torchrun does), one line says how many and that their RANKs moved; when the job
// ends, one line names the hosts it set aside (quarantine.h), if any. Lines go to
// the console and the agent's log (agent.log with --log-dir). A listener of the agent's events
// (agent_events.h).
// Threads: the agent's loop thread.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "launcher/job/agent_events.h"
#include "launcher/report/agent_console.h"

namespace cpplaunch {

// Pure: the lines for a round whose members are `after` (round `round`, `group_world_size`
// hosts) following one whose members were `before` (`before_size` hosts), as far as the lists
// tell (slot_changes.h: a large dynamic job lists a few peers each, and names only the ranks
// it knew in both rounds of the same size); empty when nothing changed.
// A replaced host in `set_aside` (quarantine.h) is said to be set aside.
std::vector<std::string> SlotChangeLines(const std::vector<RoundPeer>& before, int before_size,
                                         const std::vector<RoundPeer>& after, int group_world_size,
                                         int64_t round,
                                         const std::vector<std::string>& set_aside = {});

// The job's closing line naming the hosts it set aside (`labels`: what each node id was known
// as; a node id not known is named as is), "" when none:
//   "hosts set aside during the job (a spare took each one's place): vm-b at 10.0.0.2"
std::string SetAsideSummary(const std::vector<std::string>& set_aside,
                            const std::map<std::string, std::string>& labels);

class SlotChangeNote final : public AgentListener {
 public:
  explicit SlotChangeNote(AgentConsole& console) : console_(console) {}

  void OnAttemptStarting(const Round& round) override;
  void OnAgentEnded(const AgentEnded& ended) override;

 private:
  AgentConsole& console_;
  std::vector<std::string> set_aside_;
  std::map<std::string, std::string> labels_;  // every host seen, by node id
  std::vector<RoundPeer> last_hosts_;
  int last_size_ = 0;
  int64_t last_round_ = -1;
};

}  // namespace cpplaunch
