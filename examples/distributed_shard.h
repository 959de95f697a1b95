// Which samples each worker visits: the index arithmetic of torch.utils.data.DistributedSampler,
// without LibTorch. Pure and deterministic, so every rank computes the same permutation.
#pragma once

#include <cstdint>
#include <vector>

namespace cpplaunch::example {

struct ShardSpec {
  std::int64_t dataset_size = 0;
  int world_size = 1;
  int rank = 0;
  bool shuffle = true;
  std::uint64_t seed = 0;
};

// The indices `spec.rank` visits in `epoch`, in visiting order. As DistributedSampler with
// drop_last=false: the (optionally shuffled, seeded by seed + epoch) index list is padded by
// repeating it from the start up to a multiple of world_size, then rank r takes positions
// r, r + world_size, ... So every rank gets ceil(dataset_size / world_size) indices, the same
// number of steps per epoch, and together the ranks cover every sample at least once.
// The permutation itself differs from torch.randperm's (no bit-compatibility is attempted).
std::vector<std::int64_t> ShardIndices(const ShardSpec& spec, std::int64_t epoch);

// Unpadded, unshuffled split for evaluation: positions rank, rank + world_size, ... < size.
// Together the ranks cover every sample exactly once (shards may differ in size by one).
std::vector<std::int64_t> EvalShardIndices(std::int64_t dataset_size, int world_size, int rank);

}  // namespace cpplaunch::example
