#include "rendezvous/store/sharded_map.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>

namespace cpplaunch {
namespace {

TEST_CASE("ShardedMap spreads keys over its shards and finds each in its own",
          "[rendezvous][store][sharded_map]") {
  ShardedMap<int> map;
  for (int i = 0; i < 10000; ++i)
    map.ShardOf("key" + std::to_string(i))["key" + std::to_string(i)] = i;
  std::set<size_t> used;
  size_t total = 0;
  size_t largest = 0;
  for (size_t s = 0; s < ShardedMap<int>::kShards; ++s) {
    total += map.shard(s).size();
    largest = std::max(largest, map.shard(s).size());
    if (!map.shard(s).empty()) used.insert(s);
  }
  CHECK(total == 10000);
  CHECK(used.size() == ShardedMap<int>::kShards);
  // A rehash moves one shard: no shard holds much more than its 64th (156 keys).
  CHECK(largest < 400);
  for (int i = 0; i < 10000; i += 97) {
    const std::string key = "key" + std::to_string(i);
    auto& shard = map.ShardOf(key);
    REQUIRE(shard.find(key) != shard.end());
    CHECK(shard.find(key)->second == i);
  }
}

}  // namespace
}  // namespace cpplaunch
