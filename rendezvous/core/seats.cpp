#include "rendezvous/core/seats.h"

#include <algorithm>
#include <set>

#include "rendezvous/core/segments.h"
#include "rendezvous/core/sorted_lists.h"

namespace cpplaunch {
namespace {

bool IsVacant(const RendezvousState& state, int seat) { return ContainsSorted(state.vacant, seat); }

}  // namespace

std::vector<std::string> GroupOrder(const RendezvousState& state) {
  if (state.complete && !state.seats.empty()) return state.seats;
  return state.participants;
}

int GroupRankOf(const RendezvousState& state, std::string_view node_id) {
  if (!state.complete || state.seats.empty()) return state.RankOf(node_id);
  if (state.RankOf(node_id) < 0) return -1;
  const auto at = std::find(state.seats.begin(), state.seats.end(), node_id);
  return static_cast<int>(at - state.seats.begin());
}

std::vector<std::string> SeatOrder(const RendezvousState& state) {
  if (state.seats.empty()) return state.participants;
  // Each reserved host that came sits in its seat; the other seats are open.
  std::vector<std::string> order(state.seats.size());
  std::set<std::string_view> seated;
  for (size_t seat = 0; seat < state.seats.size(); ++seat) {
    const std::string& holder = state.seats[seat];
    if (IsVacant(state, static_cast<int>(seat)) || state.RankOf(holder) < 0) continue;
    order[seat] = holder;
    seated.insert(holder);
  }
  // A newcomer of a lost host's segment takes that host's seat (segments.h).
  for (size_t seat = 0; seat < order.size(); ++seat) {
    const std::string_view segment = SegmentOf(state, state.seats[seat]);
    if (!order[seat].empty() || segment.empty()) continue;
    for (const std::string& id : state.participants) {
      if (seated.count(id) || SegmentOf(state, id) != segment) continue;
      order[seat] = id;
      seated.insert(id);
      break;
    }
  }
  // Other newcomers (participants are sorted) fill the open seats from the lowest, then come last.
  auto open = order.begin();
  for (const std::string& id : state.participants) {
    if (seated.count(id)) continue;
    open = std::find(open, order.end(), std::string());
    if (open != order.end()) {
      *open = id;
    } else {
      order.push_back(id);
      open = order.end();
    }
  }
  // Seats nobody took close ranks, in their order.
  order.erase(std::remove(order.begin(), order.end(), std::string()), order.end());
  return order;
}

bool MarkVacant(RendezvousState* state, const JoinRequest& me) {
  if (me.lost_seat < 0 || state->complete || state->round != me.min_round ||
      me.lost_seat >= static_cast<int>(state->seats.size()) || IsVacant(*state, me.lost_seat)) {
    return false;
  }
  InsertSorted(&state->vacant, me.lost_seat);
  return true;
}

SeatBook::SeatBook(const RendezvousState& state, int64_t now_ms)
    : max_nodes_(state.max_nodes), seats_(static_cast<int>(state.seats.size())) {
  const bool lapsed = state.seats_until_ms != 0 && now_ms >= state.seats_until_ms;
  any_vacant_ = !state.vacant.empty() || (lapsed && seats_ > 0);
  std::map<std::string_view, int, std::less<>> vacant_in;  // vacant seats by their segment
  for (size_t seat = 0; seat < state.seats.size() && !lapsed; ++seat) {
    if (!IsVacant(state, static_cast<int>(seat))) {
      reserved_.insert(state.seats[seat]);
    } else if (auto segment = SegmentOf(state, state.seats[seat]); !segment.empty()) {
      ++vacant_in[segment];
    }
  }
  // A vacant seat is bound to its segment while a spare or newcomer of that segment is there.
  std::map<std::string_view, int, std::less<>> candidates;
  for (const auto* list : {&state.spares, &state.participants}) {
    for (const std::string& id : *list) {
      auto segment = SegmentOf(state, id);
      if (!reserved_.count(id) && vacant_in.count(segment)) ++candidates[segment];
    }
  }
  for (const auto& [segment, seats] : vacant_in) {
    if (candidates.count(segment)) {
      bound_[std::string(segment)] = std::min(seats, candidates[segment]);
      bound_total_ += bound_[std::string(segment)];
    }
  }
  for (const std::string& id : state.participants) Add(id, SegmentOf(state, id));
}

bool SeatBook::MayJoin(std::string_view node_id, std::string_view segment) const {
  if (reserved_.count(node_id)) return true;
  if (BoundSeatFree(segment)) return true;
  return unbound_used_ < max_nodes_ - static_cast<int>(reserved_.size()) - bound_total_;
}

void SeatBook::Add(std::string_view node_id, std::string_view segment) {
  if (reserved_.count(node_id)) {
    ++reserved_present_;
  } else if (BoundSeatFree(segment)) {
    ++bound_used_[std::string(segment)];
  } else {
    ++unbound_used_;
  }
}

bool SeatBook::BoundSeatFree(std::string_view segment) const {
  const auto bound = bound_.find(segment);
  if (bound == bound_.end()) return false;
  const auto used = bound_used_.find(segment);
  return (used == bound_used_.end() ? 0 : used->second) < bound->second;
}

bool SeatBook::Filled(int size) const {
  return any_vacant_ && reserved_present_ == static_cast<int>(reserved_.size()) && size >= seats_;
}

}  // namespace cpplaunch
