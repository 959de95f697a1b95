#pragma once
// Which host took which slot between two rounds of a multi-host job (issue 24): the facts that
// the console's slot lines (slot_change_note.h) and the torchelastic events (elastic_event.h)
// both say. Pure.

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/job/agent_events.h"
#include "launcher/report/slot_taken.h"

namespace cpplaunch {

struct SlotChanges {
  std::vector<SlotTaken> taken;
  int moved = 0;  // hosts of both rounds whose group rank changed (their RANKs moved)
};

// The changes from a round whose members were `before` (`before_size` hosts) to one whose
// members are `after` (`group_world_size` hosts), as far as these lists tell. With both lists
// complete: every slot taken and every host moved. With partial lists (a large dynamic job lists
// a few peers each: round_assignment.h), only between rounds of the same size, where stable
// seats moved no host: the known ranks whose holder changed, and `moved` 0; nothing otherwise.
// `set_aside`: the node ids set aside (quarantine.h).
SlotChanges CompareRounds(const std::vector<RoundPeer>& before, int before_size,
                          const std::vector<RoundPeer>& after, int group_world_size,
                          const std::vector<std::string>& set_aside = {});

}  // namespace cpplaunch
