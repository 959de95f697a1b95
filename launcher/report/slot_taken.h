#pragma once
// A host that holds a group rank it did not hold in the previous round of a multi-host job
// (issue 24): what the console's slot line (launcher/journal/slot_change_note.h) and the
// "cpplaunch.slot.taken" event (elastic_event.h) say. Found by CompareRounds
// (launcher/journal/slot_changes.h).

#include <string>

namespace cpplaunch {

struct SlotTaken {
  int group_rank = 0;
  std::string host;     // its label ("vm-e at 10.0.0.5")
  std::string node_id;  // its agent's node id (labels repeat: two agents on one host)
  // The lost host whose slot it took; both "" for a new slot.
  std::string replaced;
  std::string replaced_node_id;
  bool replaced_set_aside = false;  // that host is set aside for the rest of the job
};

}  // namespace cpplaunch
