// The example trainer's pure parts (examples/trainer_options, examples/distributed_shard): the
// command line, the launcher environment and the DistributedSampler index arithmetic. The
// trainer itself runs as a real job in trainer_test.py.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "examples/distributed_shard.h"
#include "examples/trainer_options.h"

namespace cpplaunch::example {
namespace {

LaunchEnv ParseFrom(const std::map<std::string, std::string>& vars) {
  return ParseLaunchEnv([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

const std::map<std::string, std::string> kTorchrunEnv = {{"RANK", "1"},
                                                         {"LOCAL_RANK", "1"},
                                                         {"WORLD_SIZE", "4"},
                                                         {"MASTER_ADDR", "127.0.0.1"},
                                                         {"MASTER_PORT", "29500"},
                                                         {"TORCHELASTIC_RESTART_COUNT", "2"},
                                                         {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                                         {"TORCHELASTIC_RUN_ID", "none"}};

TEST_CASE("trainer options: both value spellings, defaults, errors") {
  TrainerOptions o = ParseTrainerOptions({"--epochs=3", "--batch-size", "8", "--lr=0.1",
                                          "--checkpoint", "/tmp/c.pt", "--hold-at-epoch=2"});
  CHECK(o.epochs == 3);
  CHECK(o.batch_size == 8);
  CHECK(o.learning_rate == Approx(0.1));
  CHECK(o.checkpoint == "/tmp/c.pt");
  CHECK(o.hold_at_epoch == 2);
  CHECK_FALSE(o.diverge_rank.has_value());
  CHECK(ParseTrainerOptions({}).epochs == 10);
  CHECK(ParseTrainerOptions({"-h"}).help);

  CHECK_THROWS_WITH(ParseTrainerOptions({"--epochs=x"}), Catch::Contains("must be an integer"));
  CHECK_THROWS_WITH(ParseTrainerOptions({"--epochs=0"}), Catch::Contains("between 1 and"));
  CHECK_THROWS_WITH(ParseTrainerOptions({"--lr=-1"}), Catch::Contains("non-negative"));
  CHECK_THROWS_WITH(ParseTrainerOptions({"--momentum=1"}), Catch::Contains("below 1"));
  CHECK_THROWS_WITH(ParseTrainerOptions({"--epochs"}), Catch::Contains("needs a value"));
  CHECK_THROWS_WITH(ParseTrainerOptions({"--frobnicate"}), Catch::Contains("unknown option"));
}

TEST_CASE("launcher environment as torchrun and cpplaunch set it") {
  LaunchEnv env = ParseFrom(kTorchrunEnv);
  CHECK(env.rank == 1);
  CHECK(env.world_size == 4);
  CHECK(env.master_port == 29500);
  CHECK(env.use_agent_store);
  CHECK(env.restart_count == 2);
  // torch.distributed's key prefix for the workers of attempt 2.
  CHECK(env.StorePrefix() == "/worker/attempt_2");
}

TEST_CASE("launcher environment: missing or malformed variables are usage errors") {
  CHECK_THROWS_WITH(ParseFrom({}), Catch::Contains("WORLD_SIZE is not set") &&
                                       Catch::Contains("cpplaunch --nproc-per-node"));
  auto vars = kTorchrunEnv;
  vars["RANK"] = "4";  // not below WORLD_SIZE
  CHECK_THROWS_WITH(ParseFrom(vars), Catch::Contains("RANK must be between 0 and 3"));
  vars = kTorchrunEnv;
  vars.erase(
      "TORCHELASTIC_RESTART_COUNT");  // names the store prefix: mandatory with the agent store
  CHECK_THROWS_WITH(ParseFrom(vars), Catch::Contains("TORCHELASTIC_RESTART_COUNT is not set"));
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "False";  // rank 0 hosts: attempt 0 is fine
  CHECK(ParseFrom(vars).restart_count == 0);
  vars["MASTER_PORT"] = "70000";
  CHECK_THROWS_AS(ParseFrom(vars), UsageError);
}

TEST_CASE("shards: equal sizes, padded like DistributedSampler, every sample covered") {
  for (std::int64_t n : {1, 7, 8, 10, 4096}) {
    for (int world : {1, 2, 3, 4}) {
      std::multiset<std::int64_t> seen;
      for (int rank = 0; rank < world; ++rank) {
        auto shard = ShardIndices({n, world, rank, true, 42}, 3);
        REQUIRE(static_cast<std::int64_t>(shard.size()) == (n + world - 1) / world);
        seen.insert(shard.begin(), shard.end());
      }
      // Every index once, plus (padded size - n) repeats, as DistributedSampler pads.
      std::set<std::int64_t> distinct(seen.begin(), seen.end());
      CHECK(static_cast<std::int64_t>(distinct.size()) == n);
      CHECK(*distinct.begin() == 0);
      CHECK(*distinct.rbegin() == n - 1);
      CHECK(static_cast<std::int64_t>(seen.size()) == (n + world - 1) / world * world);
    }
  }
}

TEST_CASE("shards: unshuffled order is DistributedSampler's rank::world striding") {
  CHECK(ShardIndices({10, 4, 1, false, 0}, 0) == std::vector<std::int64_t>{1, 5, 9});
  // Padding repeats from the start: positions 10 and 11 are indices 0 and 1.
  CHECK(ShardIndices({10, 4, 2, false, 0}, 0) == std::vector<std::int64_t>{2, 6, 0});
  CHECK(ShardIndices({10, 4, 3, false, 0}, 0) == std::vector<std::int64_t>{3, 7, 1});
}

TEST_CASE("shards: shuffle depends on seed and epoch only") {
  auto a = ShardIndices({100, 2, 0, true, 7}, 1);
  CHECK(a == ShardIndices({100, 2, 0, true, 7}, 1));
  CHECK(a != ShardIndices({100, 2, 0, true, 7}, 2));
  CHECK(a != ShardIndices({100, 2, 0, true, 8}, 1));
  CHECK_FALSE(std::is_sorted(a.begin(), a.end()));
}

TEST_CASE("evaluation shards cover every sample exactly once") {
  std::vector<std::int64_t> all;
  for (int rank = 0; rank < 3; ++rank) {
    auto shard = EvalShardIndices(10, 3, rank);
    all.insert(all.end(), shard.begin(), shard.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

}  // namespace
}  // namespace cpplaunch::example
