#include "rendezvous/core/quarantine.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "rendezvous/core/record_limits.h"
#include "rendezvous/core/segments.h"
#include "rendezvous/core/sorted_lists.h"

namespace cpplaunch {

bool IsSpare(const RendezvousState& state, std::string_view node_id) {
  return ContainsSorted(state.spares, node_id);
}

bool IsQuarantined(const RendezvousState& state, std::string_view node_id) {
  return ContainsSorted(state.quarantined, node_id);
}

int StrikesOf(const RendezvousState& state, std::string_view node_id) {
  const auto at = LowerBoundById(state.strikes, node_id);
  return at != state.strikes.end() && at->first == node_id ? at->second : 0;
}

void CountStrike(RendezvousState* opened, const JoinRequest& me) {
  if (me.failed_seat < 0 || me.failed_seat >= static_cast<int>(opened->seats.size())) return;
  const std::string& host = opened->seats[me.failed_seat];
  if (IsQuarantined(*opened, host)) return;
  auto at = LowerBoundById(opened->strikes, host);
  if (at == opened->strikes.end() || at->first != host) {
    if (static_cast<int64_t>(opened->strikes.size()) >= record_limits::kMaxNodes) return;
    at = opened->strikes.insert(at, {host, 0});
  }
  at->second =
      static_cast<int>(std::min<int64_t>(at->second + int64_t{1}, record_limits::kMaxCount));
  if (me.quarantine_after <= 0 || at->second < me.quarantine_after || opened->spares.empty()) {
    return;
  }
  InsertSorted(&opened->quarantined, host);
  InsertSorted(&opened->vacant, me.failed_seat);
}

std::vector<std::string> SparesToConfirm(const std::optional<RendezvousState>& current,
                                         const RendezvousState& next) {
  const size_t before = current ? current->quarantined.size() : 0;
  return next.quarantined.size() > before ? next.spares : std::vector<std::string>{};
}

void SetAsideReplaced(RendezvousState* state, const std::vector<std::string>& order) {
  if (state->vacant.empty()) return;
  const std::set<std::string_view> holders(state->seats.begin(), state->seats.end());
  for (int seat : state->vacant) {
    const std::string& lost = state->seats[seat];
    if (seat >= static_cast<int>(order.size()) || state->RankOf(lost) >= 0) continue;
    if (!holders.count(order[seat])) InsertSorted(&state->quarantined, lost);  // a newcomer
  }
}

void AddSpare(RendezvousState* state, const std::string& node_id) {
  InsertSorted(&state->spares, node_id);
}

void RemoveSpare(RendezvousState* state, std::string_view node_id) {
  EraseSorted(&state->spares, node_id);
}

std::string QuarantineLine(const RendezvousState& state, std::string_view node_id) {
  const int strikes = StrikesOf(state, node_id);
  const std::string why =
      strikes > 0 ? "its workers failed first in " + std::to_string(strikes) + " attempt(s)"
                  : "its agent was lost";
  return "this host is set aside for the rest of the job: " + why +
         ", and a spare took its place; replace or repair the machine (a new agent started on it "
         "joins the job as a spare)";
}

std::string EncodeStrikes(const std::vector<std::pair<std::string, int>>& strikes) {
  std::string out;
  for (const auto& [id, count] : strikes) {
    if (!out.empty()) out += ',';
    out.append(id).append("*").append(std::to_string(count));
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, int>>> DecodeStrikes(std::string_view text) {
  auto pairs = SplitIdPairs(text, '*');
  if (!pairs) return std::nullopt;
  std::vector<std::pair<std::string, int>> strikes;
  for (auto& [id, value] : *pairs) {
    int count = 0;
    const char* end = value.data() + value.size();
    const auto [stop, ec] = std::from_chars(value.data(), end, count);
    if (ec != std::errc() || stop != end || count < 1) return std::nullopt;
    strikes.emplace_back(std::move(id), count);
  }
  return strikes;
}

bool ReadStrikesAndSegments(const TextRecord& fields, std::size_t max_bytes, RendezvousState* state,
                            std::string* error) {
  std::string text;
  if (!fields.GetText("strikes", max_bytes, &text, error)) return false;
  auto strikes = DecodeStrikes(text);
  if (!strikes) {
    *error = "rendezvous state field 'strikes' is not sorted \"<node id>*<count>\" entries";
    return false;
  }
  if (!fields.GetText("segments", max_bytes, &text, error)) return false;
  auto segments = DecodeSegments(text);
  if (!segments) {
    *error = "rendezvous state field 'segments' is not sorted \"<node id>=<segment>\" entries";
    return false;
  }
  state->strikes = std::move(*strikes);
  state->segments = std::move(*segments);
  return true;
}

}  // namespace cpplaunch
