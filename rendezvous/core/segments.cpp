#include "rendezvous/core/segments.h"

#include <algorithm>
#include <set>

#include "base/text.h"
#include "rendezvous/core/record_limits.h"

namespace cpplaunch {
namespace {

constexpr size_t kMaxSegmentBytes = 64;

template <class Segments>
auto Find(Segments& segments, std::string_view id) {
  return std::lower_bound(
      segments.begin(), segments.end(), id,
      [](const auto& entry, std::string_view key) { return entry.first < key; });
}

}  // namespace

bool IsSegmentName(std::string_view name) {
  if (name.empty() || name.size() > kMaxSegmentBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '/' || c == '-';
  });
}

std::string_view SegmentOf(const RendezvousState& state, std::string_view node_id) {
  const auto at = Find(state.segments, node_id);
  return at != state.segments.end() && at->first == node_id ? std::string_view(at->second) : "";
}

void SetSegment(RendezvousState* state, const std::string& node_id, const std::string& segment) {
  if (segment.empty()) return;
  auto at = Find(state->segments, node_id);
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
  std::vector<std::pair<std::string, std::string>> segments;
  if (text.empty()) return segments;
  for (std::string_view item : Split(text, ',')) {
    const size_t eq = item.rfind('=');
    if (eq == std::string_view::npos || eq == 0 || eq > record_limits::kMaxNodeIdBytes ||
        !IsSegmentName(item.substr(eq + 1)) ||
        static_cast<int64_t>(segments.size()) >= record_limits::kMaxNodes) {
      return std::nullopt;
    }
    std::string id(item.substr(0, eq));
    if (!segments.empty() && !(segments.back().first < id)) return std::nullopt;
    segments.emplace_back(std::move(id), std::string(item.substr(eq + 1)));
  }
  return segments;
}

}  // namespace cpplaunch
