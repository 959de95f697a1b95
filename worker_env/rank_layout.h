#pragma once
// Who each worker of this agent is, given the local world size of every agent in the
// rendezvous. Pure. Matches torchrun's rank assignment for a single role: agents are
// ordered by group rank, and an agent's base rank is the sum of the local world sizes
// of the agents before it, so heterogeneous --nproc-per-node works as under torchrun.

#include <optional>
#include <string>
#include <vector>

namespace cpplaunch {

// The identity variables of one worker (torchrun's names in comments).
struct WorkerIdentity {
  int local_rank = 0;        // LOCAL_RANK (before any --virtual-local-rank rewrite)
  int rank = 0;              // RANK
  int group_rank = 0;        // GROUP_RANK
  int role_rank = 0;         // ROLE_RANK (== rank: every agent runs the same role)
  int role_world_size = 0;   // ROLE_WORLD_SIZE (== world_size)
  int local_world_size = 0;  // LOCAL_WORLD_SIZE
  int world_size = 0;        // WORLD_SIZE
  int group_world_size = 0;  // GROUP_WORLD_SIZE (number of agents)

  friend bool operator==(const WorkerIdentity&, const WorkerIdentity&) = default;
};

struct RankLayout {
  int group_rank = 0;
  int base_rank = 0;  // RANK of this agent's local rank 0
  int local_world_size = 0;
  int world_size = 0;
  int group_world_size = 0;
  std::vector<WorkerIdentity> workers;  // indexed by local rank
};

// local_world_sizes[i] is the worker count of the agent with group rank i.
// Returns nullopt and fills *error when group_rank is not an index of local_world_sizes
// or any size is below 1, or when the sizes add up (in 64 bits) to more than INT32_MAX: a
// world size that no int can hold is refused, never wrapped to a negative WORLD_SIZE.
std::optional<RankLayout> ComputeRankLayout(int group_rank,
                                            const std::vector<int>& local_world_sizes,
                                            std::string* error);

// The layout of the agent at `group_rank` from its place in the job, as a dynamic round hands it
// out (rendezvous/round_assignment.h): `base_rank` workers on lower group ranks, `world_size` in
// all. Nullopt with *error for a place that cannot be: group_rank outside 0..group_world_size-1,
// local_world_size below 1, base_rank + local_world_size above world_size, or a world size above
// INT32_MAX.
std::optional<RankLayout> PlaceRankLayout(int group_rank, int group_world_size, int64_t base_rank,
                                          int local_world_size, int64_t world_size,
                                          std::string* error);

// Shortcut for the homogeneous case: every one of group_world_size agents runs nproc.
std::optional<RankLayout> ComputeRankLayout(int group_rank, int group_world_size, int nproc,
                                            std::string* error);

}  // namespace cpplaunch
