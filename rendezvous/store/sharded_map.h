#pragma once
// ShardedMap: a hash map from string keys, split into shards by the key's hash. Growing a hash
// map rehashes every element at once; a store's pending waits can name two million keys, whose
// rehash held the server's one thread for half a second (measured). Split in 64, one rehash
// moves a 64th of them. Pure container: no I/O. Not thread-safe.

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cpplaunch {

template <typename V>
class ShardedMap {
 public:
  static constexpr size_t kShards = 64;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  using Shard = std::unordered_map<std::string, V, Hash, std::equal_to<>>;

  // The shard `key` lives in: find, insert and erase it there.
  Shard& ShardOf(std::string_view key) { return shards_[Hash{}(key) % kShards]; }
  Shard& shard(size_t index) { return shards_[index]; }

 private:
  std::array<Shard, kShards> shards_;
};

}  // namespace cpplaunch
