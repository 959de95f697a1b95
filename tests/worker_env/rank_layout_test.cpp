#include "worker_env/rank_layout.h"

#include <catch2/catch.hpp>
#include <cstdint>

namespace cpplaunch {
namespace {

TEST_CASE("homogeneous layout: RANK = GROUP_RANK * nproc + LOCAL_RANK") {
  std::string error;
  auto layout = ComputeRankLayout(1, 3, 4, &error);
  REQUIRE(layout);
  CHECK(layout->base_rank == 4);
  CHECK(layout->world_size == 12);
  CHECK(layout->group_world_size == 3);
  CHECK(layout->local_world_size == 4);
  REQUIRE(layout->workers.size() == 4);
  const WorkerIdentity& w = layout->workers[2];
  CHECK(w.local_rank == 2);
  CHECK(w.rank == 6);
  CHECK(w.group_rank == 1);
  CHECK(w.role_rank == 6);
  CHECK(w.role_world_size == 12);
  CHECK(w.local_world_size == 4);
  CHECK(w.world_size == 12);
  CHECK(w.group_world_size == 3);
}

TEST_CASE("heterogeneous layout: base rank sums the lower group ranks' sizes") {
  std::string error;
  const std::vector<int> sizes = {2, 3, 1};
  auto first = ComputeRankLayout(0, sizes, &error);
  auto middle = ComputeRankLayout(1, sizes, &error);
  auto last = ComputeRankLayout(2, sizes, &error);
  REQUIRE((first && middle && last));
  CHECK(first->base_rank == 0);
  CHECK(middle->base_rank == 2);
  CHECK(last->base_rank == 5);
  for (const auto* layout : {&*first, &*middle, &*last}) {
    CHECK(layout->world_size == 6);
    CHECK(layout->group_world_size == 3);
  }
  REQUIRE(middle->workers.size() == 3);
  CHECK(middle->workers[0].rank == 2);
  CHECK(middle->workers[2].rank == 4);
  CHECK(middle->workers[2].local_world_size == 3);
  REQUIRE(last->workers.size() == 1);
  CHECK(last->workers[0].rank == 5);
  CHECK(last->workers[0].role_rank == 5);
}

TEST_CASE("every global rank appears exactly once across agents") {
  std::string error;
  const std::vector<int> sizes = {4, 1, 3, 2};
  std::vector<int> seen(10, 0);
  for (int g = 0; g < 4; ++g) {
    auto layout = ComputeRankLayout(g, sizes, &error);
    REQUIRE(layout);
    for (const WorkerIdentity& w : layout->workers) ++seen.at(static_cast<size_t>(w.rank));
  }
  CHECK(seen == std::vector<int>(10, 1));
}

TEST_CASE("invalid layouts are refused with a reason") {
  std::string error;
  CHECK_FALSE(ComputeRankLayout(2, std::vector<int>{1, 1}, &error));
  CHECK(error.find("group rank 2") != std::string::npos);
  CHECK_FALSE(ComputeRankLayout(-1, std::vector<int>{1}, &error));
  CHECK_FALSE(ComputeRankLayout(0, std::vector<int>{}, &error));
  CHECK_FALSE(ComputeRankLayout(0, std::vector<int>{2, 0}, &error));
  CHECK(error.find("agent 1") != std::string::npos);
  CHECK_FALSE(ComputeRankLayout(0, 0, 2, &error));
}

TEST_CASE("a world size above INT32_MAX is refused, never wrapped negative") {
  std::string error;
  // The repro: a fake node reporting local_world_size=2147483647 beside a real one.
  CHECK_FALSE(ComputeRankLayout(0, std::vector<int>{2, INT32_MAX}, &error));
  CHECK(error.find("2147483649 workers") != std::string::npos);
  CHECK_FALSE(ComputeRankLayout(1, std::vector<int>{INT32_MAX, INT32_MAX, INT32_MAX}, &error));
  // Exactly INT32_MAX still fits.
  auto layout = ComputeRankLayout(1, std::vector<int>{INT32_MAX - 1, 1}, &error);
  REQUIRE(layout);
  CHECK(layout->world_size == INT32_MAX);
  CHECK(layout->base_rank == INT32_MAX - 1);
  CHECK(layout->workers.at(0).rank == INT32_MAX - 1);
}

TEST_CASE("a place handed out by a dynamic round gives the same layout as the sizes") {
  std::string error;
  auto placed = PlaceRankLayout(1, 3, 2, 1, 6, &error);
  auto computed = ComputeRankLayout(1, std::vector<int>{2, 1, 3}, &error);
  REQUIRE(placed);
  REQUIRE(computed);
  CHECK(placed->base_rank == computed->base_rank);
  CHECK(placed->world_size == computed->world_size);
  CHECK(placed->workers.at(0).rank == 2);
  CHECK(placed->workers.at(0).role_world_size == 6);
}

TEST_CASE("a place that cannot be is refused") {
  std::string error;
  CHECK_FALSE(PlaceRankLayout(3, 3, 0, 1, 6, &error));  // group rank outside the round
  CHECK(error.find("not a valid place") != std::string::npos);
  CHECK_FALSE(PlaceRankLayout(0, 1, 5, 2, 6, &error));  // ranks 5..6 of a world of 6
  CHECK_FALSE(PlaceRankLayout(0, 1, 0, 0, 6, &error));  // no workers
  CHECK_FALSE(PlaceRankLayout(0, 1, 0, 1, int64_t{INT32_MAX} + 1, &error));
}

}  // namespace
}  // namespace cpplaunch
