#include "rendezvous/core/seats.h"

#include <algorithm>
#include <set>

namespace cpplaunch {
namespace {

bool IsVacant(const RendezvousState& state, int seat) {
  return std::binary_search(state.vacant.begin(), state.vacant.end(), seat);
}

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
  // Newcomers (participants are sorted) fill the open seats from the lowest, then come last.
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
  state->vacant.insert(std::lower_bound(state->vacant.begin(), state->vacant.end(), me.lost_seat),
                       me.lost_seat);
  return true;
}

SeatBook::SeatBook(const RendezvousState& state, int64_t now_ms)
    : max_nodes_(state.max_nodes), seats_(static_cast<int>(state.seats.size())) {
  const bool lapsed = state.seats_until_ms != 0 && now_ms >= state.seats_until_ms;
  any_vacant_ = !state.vacant.empty() || (lapsed && seats_ > 0);
  for (size_t seat = 0; seat < state.seats.size() && !lapsed; ++seat) {
    if (!IsVacant(state, static_cast<int>(seat))) reserved_.insert(state.seats[seat]);
  }
  for (const std::string& id : state.participants) Add(id);
}

bool SeatBook::MayJoin(std::string_view node_id) const {
  if (reserved_.count(node_id)) return true;
  return newcomers_ < max_nodes_ - static_cast<int>(reserved_.size());
}

void SeatBook::Add(std::string_view node_id) {
  if (reserved_.count(node_id)) {
    ++reserved_present_;
  } else {
    ++newcomers_;
  }
}

bool SeatBook::Filled(int size) const {
  return any_vacant_ && reserved_present_ == static_cast<int>(reserved_.size()) && size >= seats_;
}

}  // namespace cpplaunch
