#pragma once
// Stable seats (issue 24): who gets which group rank in a dynamic round. Pure.
//
// A round opened after a complete one carries that round's group-rank order (state.seats). A host
// that held a seat keeps it: the seat is reserved for it, newcomers cannot take it, and its group
// rank (so every RANK of its workers) is the same as before. The seats whose host was lost (its
// agent died, its connections closed or it went silent: the round's end named it) are vacant
// (state.vacant): newcomers, spares first of all, take them in node-id order. When a vacant seat
// finds no newcomer the round shrinks and the remaining seats close ranks in their old order (for
// a job whose seats were never refilled that is the sorted order torchrun gives); newcomers
// beyond the seats (a job growing) come after them. A newcomer of a lost host's segment
// (segments.h) takes that host's seat before the others are placed. A round that has a vacant seat
// completes at once when every reserved host and a newcomer for every vacant seat joined: no last
// call is waited for. A round without carried seats (the first) ranks by sorted node id, as
// torchrun. When a spare waits, the c10d backend does not wait for the survivors' joins at all:
// one survivor writes the next round at once, complete, with the seats they would have taken
// (ReplacementRound, rendezvous_state.h).
//
// A host can die without the round's end naming it (two hosts lost at once, or a worker of a
// survivor failing first on the lost peer): its seat would be held for nobody. Reservations
// therefore lapse last_call_timeout after the round was opened (state.seats_until_ms): from then
// on any host may take a free seat, and a round with every seat taken completes.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rendezvous/core/rendezvous_state.h"

namespace cpplaunch {

// The node ids of `state`'s participants by group rank: state.seats when the round is complete
// and carries them, the sorted participants otherwise.
std::vector<std::string> GroupOrder(const RendezvousState& state);

// The group rank of `node_id` in `state` (GroupOrder's index), -1 when it is not a participant.
// Linear when the round has seats.
int GroupRankOf(const RendezvousState& state, std::string_view node_id);

// The group-rank order the incomplete round `state` gets when it completes now (the rules above).
std::vector<std::string> SeatOrder(const RendezvousState& state);

// Marks the seat `me` saw lost (me.lost_seat) vacant in the round it asks for, when that is
// `state`'s open round and the seat is a carried one not marked yet. Returns true when it did.
bool MarkVacant(RendezvousState* state, const JoinRequest& me);

// Who may still take a place in an incomplete round, counted once over its participants (linear)
// and kept up to date as nodes are added. Holds views into `state`'s seats: `state` must outlive
// it and keep its seats.
class SeatBook {
 public:
  // `now_ms`: wall-clock ms, against state.seats_until_ms.
  SeatBook(const RendezvousState& state, int64_t now_ms);
  // The round has room for `node_id` of `segment` (segments.h; "" for none): a reserved host
  // always does (its seat waits for it), a newcomer while a free seat is left for it. A vacant
  // seat whose lost host named a segment is bound to that segment while a spare or newcomer of
  // it is there (as many seats as there are such hosts); the other free seats (MAX minus the
  // reserved and bound ones) take anybody. The caller checks that the round is below MAX.
  bool MayJoin(std::string_view node_id, std::string_view segment = {}) const;
  void Add(std::string_view node_id, std::string_view segment = {});
  // A seat was lost and every seat is taken by `size` participants: the round completes now.
  bool Filled(int size) const;

 private:
  std::unordered_set<std::string_view> reserved_;
  int max_nodes_ = 0;
  int seats_ = 0;
  bool any_vacant_ = false;  // or the reservations lapsed
  int reserved_present_ = 0;
  std::map<std::string, int, std::less<>> bound_;  // vacant seats bound to a segment
  std::map<std::string, int, std::less<>> bound_used_;
  int bound_total_ = 0;
  int unbound_used_ = 0;

  bool BoundSeatFree(std::string_view segment) const;
};

}  // namespace cpplaunch
