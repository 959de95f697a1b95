#pragma once
// What one member of a complete dynamic round must know, and nothing more. The agent whose write
// completes a round computes every member's assignment once (AssignRound) and stores each under
// the member's own key; a member then reads its O(log N)-byte assignment and the few records it
// names, instead of the whole state and every member's record (which made a round's store
// traffic grow as N^2: 8 GB at 4,000 hosts). Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/core/seats.h"

namespace cpplaunch {

struct RoundAssignment {
  int64_t round = 0;
  int restart_count = 0;
  int group_rank = 0;
  int group_world_size = 0;
  int64_t base_rank = 0;   // RANK of the member's local rank 0: the workers of lower group ranks
  int64_t world_size = 0;  // the workers of every member
  // (group rank, node id) of each rank in KnownRanks(group_rank, group_world_size), ascending.
  std::vector<std::pair<int, std::string>> peers;
  // The node ids set aside so far in the job (quarantine.h), for the members to name them.
  // Optional on the wire.
  std::vector<std::string> set_aside;

  std::string Encode() const;
  // Nullopt with *error when `text` is not an encoded assignment: fields missing or out of
  // range (record_limits.h), or peers other than KnownRanks(group_rank, group_world_size).
  static std::optional<RoundAssignment> Decode(std::string_view text, std::string* error);
  friend bool operator==(const RoundAssignment&, const RoundAssignment&) = default;
};

// The round as the member of `assignment` joins it, before its members' records are read (the
// caller adds them, and where the workers' store is).
RendezvousResult ResultWithoutMembers(const RoundAssignment& assignment);

// The peers whose heartbeats the member at `self` watches: those 1, 2, 4, ... group ranks after
// it on the ring of `size` members. Its neighbour (the first) is always among them, so any dead
// member is watched by a live one; the longer distances let a block of silent neighbours be
// noticed by several members, at N log N reads a tick for the job instead of N^2.
std::vector<int> HeartbeatPeers(int self, int size);

// The group ranks the member at `group_rank` must know by name: itself, group rank 0 (whose
// record says where the workers' store is under --worker-store=rank0) and its heartbeat peers;
// in a round of at most kEveryoneKnownUpTo members, every member, so that each host can say
// which host took which slot and which ranks moved (launcher/journal/slot_changes.h; from
// partial lists, only the hosts that knew the lost one can).
// Ascending, without repeats.
inline constexpr int kEveryoneKnownUpTo = 8;
std::vector<int> KnownRanks(int group_rank, int group_world_size);

// Every member's assignment for the complete round `state`, indexed by group rank (the position
// in GroupOrder(state), seats.h). local_world_sizes[i] belongs to GroupOrder(state)[i]; the caller
// has read them from the members' records, which NodeInfo::Decode bounds, so their sum fits int64.
std::vector<RoundAssignment> AssignRound(const RendezvousState& state,
                                         const std::vector<int>& local_world_sizes);

}  // namespace cpplaunch
