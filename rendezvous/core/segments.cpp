#include "rendezvous/core/segments.h"

#include <algorithm>
#include <set>

#include "rendezvous/core/sorted_lists.h"

namespace cpplaunch {
namespace {

constexpr size_t kMaxSegmentBytes = 64;

}  // namespace

bool IsSegmentName(std::string_view name) {
  if (name.empty() || name.size() > kMaxSegmentBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '/' || c == '-';
  });
}

std::string_view SegmentOf(const RendezvousState& state, std::string_view node_id) {
  const auto at = LowerBoundById(state.segments, node_id);
  return at != state.segments.end() && at->first == node_id ? std::string_view(at->second) : "";
}

void SetSegment(RendezvousState* state, const std::string& node_id, const std::string& segment) {
  if (segment.empty()) return;
  auto at = LowerBoundById(state->segments, node_id);
  if (at != state->segments.end() && at->first == node_id) {
    at->second = segment;
  } else {
    state->segments.insert(at, {node_id, segment});
  }
}

void KeepCurrentSegments(RendezvousState* state) {
  if (state->segments.empty()) return;
  std::set<std::string_view> current(state->seats.begin(), state->seats.end());
  current.insert(state->participants.begin(), state->participants.end());
  current.insert(state->spares.begin(), state->spares.end());
  std::erase_if(state->segments, [&](const auto& entry) { return !current.count(entry.first); });
}

std::string EncodeSegments(const std::vector<std::pair<std::string, std::string>>& segments) {
  std::string out;
  for (const auto& [id, segment] : segments) {
    if (!out.empty()) out += ',';
    out.append(id).append("=").append(segment);
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> DecodeSegments(
    std::string_view text) {
  auto pairs = SplitIdPairs(text, '=');
  if (!pairs) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> segments;
  for (auto& [id, segment] : *pairs) {
    if (!IsSegmentName(segment)) return std::nullopt;
    segments.emplace_back(std::move(id), std::string(segment));
  }
  return segments;
}

}  // namespace cpplaunch
