#pragma once
// Segments (issue 24, placement): the part of the cluster a host sits in, for example the NVLink
// domain or leaf switch its machine hangs off (--rdzv-conf segment=NAME, or the Slurm step's
// topology address). A lost host's seat goes to a spare of its own segment when one waits, and
// to any spare otherwise (seats.h), so that a replacement keeps the job's fast links where it
// can. Pure.
//
// The state records the segment of each participant and spare that named one
// (state.segments); a host without a segment matches none.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rendezvous/core/rendezvous_state.h"

namespace cpplaunch {

// A segment name: 1 to 64 bytes of letters, digits and . _ : / -.
bool IsSegmentName(std::string_view name);

// The segment `node_id` named when it joined or waited ("" when none).
std::string_view SegmentOf(const RendezvousState& state, std::string_view node_id);

// Records `segment` for `node_id` (nothing for an empty segment).
void SetSegment(RendezvousState* state, const std::string& node_id, const std::string& segment);

// Keeps the segments of the seats' holders, participants and spares only: a new round forgets
// the hosts that left.
void KeepCurrentSegments(RendezvousState* state);

// "idA=seg1,idB=seg2", sorted by node id, and back (nullopt: malformed, unsorted, repeated, a
// bad segment name, more than kMaxNodes entries).
std::string EncodeSegments(const std::vector<std::pair<std::string, std::string>>& segments);
std::optional<std::vector<std::pair<std::string, std::string>>> DecodeSegments(
    std::string_view text);

}  // namespace cpplaunch
