#include "rendezvous/core/round_assignment.h"

#include <algorithm>
#include <numeric>

#include "base/text.h"
#include "rendezvous/core/record_limits.h"
#include "rendezvous/core/text_record.h"

namespace cpplaunch {
namespace {

std::string PeerField(int group_rank) { return "peer." + std::to_string(group_rank); }

}  // namespace

RendezvousResult ResultWithoutMembers(const RoundAssignment& assignment) {
  RendezvousResult result;
  result.round = assignment.round;
  result.restart_count = assignment.restart_count;
  result.group_rank = assignment.group_rank;
  result.group_size = assignment.group_world_size;
  result.base_rank = assignment.base_rank;
  result.world_size = assignment.world_size;
  result.set_aside = assignment.set_aside;
  return result;
}

std::vector<int> HeartbeatPeers(int self, int size) {
  std::vector<int> peers;
  for (int distance = 1; distance < size; distance *= 2) peers.push_back((self + distance) % size);
  return peers;
}

std::vector<int> KnownRanks(int group_rank, int group_world_size) {
  if (group_world_size <= kEveryoneKnownUpTo) {
    // At most 8 records read by each member, 64 in all: nothing next to the round's own cost.
    std::vector<int> everyone(static_cast<size_t>(std::max(group_world_size, 0)));
    std::iota(everyone.begin(), everyone.end(), 0);
    return everyone;
  }
  std::vector<int> ranks = HeartbeatPeers(group_rank, group_world_size);
  ranks.push_back(group_rank);
  ranks.push_back(0);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::string RoundAssignment::Encode() const {
  TextRecordBuilder out;
  out.AddInt("round", round)
      .AddInt("restart_count", restart_count)
      .AddInt("group_rank", group_rank)
      .AddInt("group_world_size", group_world_size)
      .AddInt("base_rank", base_rank)
      .AddInt("world_size", world_size);
  for (const auto& [rank, node_id] : peers) out.Add(PeerField(rank), node_id);
  if (!set_aside.empty()) out.Add("set_aside", Join(set_aside, ","));
  return out.text();
}

std::optional<RoundAssignment> RoundAssignment::Decode(std::string_view text, std::string* error) {
  auto fields = TextRecord::Parse(text, "round assignment", error);
  if (!fields) return std::nullopt;
  RoundAssignment a;
  const int64_t max_workers = record_limits::kMaxNodes * record_limits::kMaxLocalWorldSize;
  if (!fields->GetInt64In("round", 0, INT64_MAX, &a.round, error) ||
      !fields->GetIntIn("restart_count", 0, record_limits::kMaxCount, &a.restart_count, error) ||
      !fields->GetIntIn("group_world_size", 1, record_limits::kMaxNodes, &a.group_world_size,
                        error) ||
      !fields->GetIntIn("group_rank", 0, a.group_world_size - 1, &a.group_rank, error) ||
      !fields->GetInt64In("world_size", a.group_world_size, max_workers, &a.world_size, error) ||
      !fields->GetInt64In("base_rank", a.group_rank, a.world_size - 1, &a.base_rank, error)) {
    return std::nullopt;
  }
  for (int rank : KnownRanks(a.group_rank, a.group_world_size)) {
    std::string node_id;
    if (!fields->GetText(PeerField(rank), record_limits::kMaxNodeIdBytes, &node_id, error)) {
      return std::nullopt;
    }
    if (node_id.empty()) {
      *error = "round assignment is missing '" + PeerField(rank) + "'";
      return std::nullopt;
    }
    a.peers.emplace_back(rank, std::move(node_id));
  }
  std::string set_aside;
  const size_t max_bytes = record_limits::kMaxNodes * (record_limits::kMaxNodeIdBytes + 1);
  if (!fields->GetText("set_aside", max_bytes, &set_aside, error)) return std::nullopt;
  for (std::string_view id :
       set_aside.empty() ? std::vector<std::string_view>{} : Split(set_aside, ',')) {
    if (id.empty() || id.size() > record_limits::kMaxNodeIdBytes) {
      *error = "round assignment field 'set_aside' holds an empty or overlong node id";
      return std::nullopt;
    }
    a.set_aside.emplace_back(id);
  }
  return a;
}

std::vector<RoundAssignment> AssignRound(const RendezvousState& state,
                                         const std::vector<int>& local_world_sizes) {
  const std::vector<std::string> order = GroupOrder(state);
  const int size = static_cast<int>(order.size());
  int64_t world_size = 0;
  for (int n : local_world_sizes) world_size += n;
  std::vector<RoundAssignment> all(size);
  int64_t base_rank = 0;
  for (int rank = 0; rank < size; ++rank) {
    RoundAssignment& a = all[rank];
    a.round = state.round;
    a.restart_count = state.restart_count;
    a.group_rank = rank;
    a.group_world_size = size;
    a.base_rank = base_rank;
    a.world_size = world_size;
    for (int peer : KnownRanks(rank, size)) a.peers.emplace_back(peer, order[peer]);
    a.set_aside = state.quarantined;
    base_rank += local_world_sizes[rank];
  }
  return all;
}

}  // namespace cpplaunch
