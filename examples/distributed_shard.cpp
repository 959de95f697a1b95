#include "examples/distributed_shard.h"

#include <numeric>
#include <random>
#include <utility>

namespace cpplaunch::example {
namespace {

// Uniform integer in [0, bound) by rejection, so the result depends only on the engine's output
// (std::uniform_int_distribution is implementation-defined).
std::uint64_t UniformBelow(std::mt19937_64& engine, std::uint64_t bound) {
  const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % bound;
  std::uint64_t draw = engine();
  while (draw >= limit) draw = engine();
  return draw % bound;
}

}  // namespace

std::vector<std::int64_t> ShardIndices(const ShardSpec& spec, std::int64_t epoch) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(spec.dataset_size));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (spec.shuffle) {
    std::mt19937_64 engine(spec.seed + static_cast<std::uint64_t>(epoch));
    for (std::size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[UniformBelow(engine, i)]);
    }
  }
  const std::int64_t world = spec.world_size;
  const std::int64_t per_rank = (spec.dataset_size + world - 1) / world;
  std::vector<std::int64_t> shard;
  shard.reserve(static_cast<std::size_t>(per_rank));
  for (std::int64_t k = 0; k < per_rank; ++k) {
    const std::int64_t position = spec.rank + k * world;  // in the padded list
    shard.push_back(order[static_cast<std::size_t>(position % spec.dataset_size)]);
  }
  return shard;
}

std::vector<std::int64_t> EvalShardIndices(std::int64_t dataset_size, int world_size, int rank) {
  std::vector<std::int64_t> shard;
  for (std::int64_t i = rank; i < dataset_size; i += world_size) shard.push_back(i);
  return shard;
}

}  // namespace cpplaunch::example
