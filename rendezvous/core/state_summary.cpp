// The state summary (rendezvous_state.h: StateSummary): what a waiting participant reads
// after an epoch change, or for a progress line, instead of the whole state.

#include <algorithm>

#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/core/text_record.h"

namespace cpplaunch {

std::string EncodeSummary(const RendezvousState& state) {
  RendezvousState cut = state;
  cut.participants.resize(std::min(cut.participants.size(), StateSummary::kSummaryIds));
  cut.wait_list.resize(std::min(cut.wait_list.size(), StateSummary::kSummaryIds));
  cut.seats.clear();  // a summary is not read for ranks
  cut.vacant.clear();
  cut.spares.clear();
  cut.quarantined.clear();
  cut.strikes.clear();
  cut.segments.clear();
  TextRecordBuilder joined;
  joined.AddInt("joined", static_cast<int64_t>(state.participants.size()));
  return cut.Encode() + joined.text();
}

std::optional<StateSummary> DecodeSummary(std::string_view text, std::string* error) {
  StateSummary summary;
  auto state = RendezvousState::Decode(text, error);
  auto fields = TextRecord::Parse(text, "rendezvous summary", error);
  if (!state || !fields ||
      !fields->GetIntIn("joined", static_cast<int64_t>(state->participants.size()),
                        state->max_nodes, &summary.joined, error)) {
    return std::nullopt;
  }
  summary.state = std::move(*state);
  return summary;
}

}  // namespace cpplaunch
