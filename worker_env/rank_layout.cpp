#include "worker_env/rank_layout.h"

#include <cstdint>
#include <numeric>

namespace cpplaunch {
namespace {

// In a multi-host job the sizes are the other hosts' records read from the store, so they are
// checked here rather than trusted: one bad record must become an error, not an out-of-range
// index or a negative rank.
bool Validate(int group_rank, const std::vector<int>& sizes, std::string* error) {
  if (sizes.empty() || group_rank < 0 || group_rank >= static_cast<int>(sizes.size())) {
    *error = "group rank " + std::to_string(group_rank) + " is outside the " +
             std::to_string(sizes.size()) + " agents of the rendezvous";
    return false;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1) {
      *error = "agent " + std::to_string(i) + " reported " + std::to_string(sizes[i]) +
               " local workers; every agent needs at least 1";
      return false;
    }
  }
  // Summed in 64 bits: a wrapped int sum would hand the workers a negative WORLD_SIZE.
  const int64_t world = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (world > INT32_MAX) {
    *error = "the agents reported " + std::to_string(world) +
             " workers in all, more than a world size can hold (" + std::to_string(INT32_MAX) +
             "); an agent's record is wrong";
    return false;
  }
  return true;
}

}  // namespace

std::optional<RankLayout> ComputeRankLayout(int group_rank,
                                            const std::vector<int>& local_world_sizes,
                                            std::string* error) {
  if (!Validate(group_rank, local_world_sizes, error)) return std::nullopt;
  // torchrun's rank assignment: agents in group-rank order, each taking the next
  // local_world_size global ranks; this is what makes a heterogeneous --nproc-per-node work.
  // Validate bounded the whole sum by INT32_MAX, so neither sum can overflow.
  const int64_t base_rank = std::accumulate(local_world_sizes.begin(),
                                            local_world_sizes.begin() + group_rank, int64_t{0});
  const int64_t world_size =
      std::accumulate(local_world_sizes.begin(), local_world_sizes.end(), int64_t{0});
  return PlaceRankLayout(group_rank, static_cast<int>(local_world_sizes.size()), base_rank,
                         local_world_sizes[group_rank], world_size, error);
}

std::optional<RankLayout> PlaceRankLayout(int group_rank, int group_world_size, int64_t base_rank,
                                          int local_world_size, int64_t world_size,
                                          std::string* error) {
  if (group_rank < 0 || group_rank >= group_world_size || local_world_size < 1 || base_rank < 0 ||
      base_rank + local_world_size > world_size || world_size > INT32_MAX) {
    *error = "group rank " + std::to_string(group_rank) + " of " +
             std::to_string(group_world_size) + " with ranks " + std::to_string(base_rank) + ".." +
             std::to_string(base_rank + local_world_size - 1) + " of a world of " +
             std::to_string(world_size) + " is not a valid place in the job";
    return std::nullopt;
  }
  RankLayout layout;
  layout.group_rank = group_rank;
  layout.group_world_size = group_world_size;
  layout.local_world_size = local_world_size;
  layout.base_rank = static_cast<int>(base_rank);
  layout.world_size = static_cast<int>(world_size);
  for (int local_rank = 0; local_rank < layout.local_world_size; ++local_rank) {
    WorkerIdentity w;
    w.local_rank = local_rank;
    w.rank = layout.base_rank + local_rank;
    w.group_rank = group_rank;
    // One role per job (torchrun's CLI cannot name more), so the role ranks are the global ones.
    w.role_rank = w.rank;
    w.role_world_size = layout.world_size;
    w.local_world_size = layout.local_world_size;
    w.world_size = layout.world_size;
    w.group_world_size = layout.group_world_size;
    layout.workers.push_back(w);
  }
  return layout;
}

std::optional<RankLayout> ComputeRankLayout(int group_rank, int group_world_size, int nproc,
                                            std::string* error) {
  if (group_world_size < 1) {
    *error = "a rendezvous needs at least 1 agent, got " + std::to_string(group_world_size);
    return std::nullopt;
  }
  return ComputeRankLayout(group_rank, std::vector<int>(group_world_size, nproc), error);
}

}  // namespace cpplaunch
