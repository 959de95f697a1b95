#include "rendezvous/core/round_assignment.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

namespace cpplaunch {
namespace {

RendezvousState CompleteState(int size) {
  RendezvousState state;
  state.round = 3;
  state.restart_count = 2;
  state.min_nodes = state.max_nodes = size;
  state.complete = true;
  for (int i = 0; i < size; ++i) {
    // Sorted as the state keeps them: fixed width.
    std::string id = std::to_string(100000 + i);
    state.participants.push_back("10.0.0.1_" + id);
  }
  return state;
}

TEST_CASE("Heartbeat peers: 1, 2, 4, ... ranks ahead on the ring", "[rendezvous][assignment]") {
  CHECK(HeartbeatPeers(0, 1).empty());
  CHECK(HeartbeatPeers(1, 2) == std::vector<int>{0});
  CHECK(HeartbeatPeers(2, 3) == std::vector<int>{0, 1});
  CHECK(HeartbeatPeers(5, 10) == std::vector<int>{6, 7, 9, 3});
}

TEST_CASE("Known ranks: self, group rank 0 and the heartbeat peers, ascending, once each",
          "[rendezvous][assignment]") {
  CHECK(KnownRanks(0, 1) == std::vector<int>{0});
  CHECK(KnownRanks(0, 3) == std::vector<int>{0, 1, 2});
  // Up to 8 members, everyone: at 4, rank 2's heartbeat peers (3, 0) would leave out 1.
  CHECK(KnownRanks(2, 4) == std::vector<int>{0, 1, 2, 3});
  CHECK(KnownRanks(7, 8) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(KnownRanks(5, 9) == std::vector<int>{0, 4, 5, 6, 7});
  CHECK(KnownRanks(5, 10) == std::vector<int>{0, 3, 5, 6, 7, 9});
  // 10,000 members: 14 peers + self + rank 0, not 10,000.
  CHECK(KnownRanks(4242, 10000).size() == 16);
}

TEST_CASE("AssignRound gives each member its ranks and its peers' ids",
          "[rendezvous][assignment]") {
  const RendezvousState state = CompleteState(5);
  const std::vector<int> sizes{2, 1, 3, 1, 4};
  const std::vector<RoundAssignment> all = AssignRound(state, sizes);
  REQUIRE(all.size() == 5);
  const std::vector<int64_t> bases{0, 2, 3, 6, 7};
  for (int rank = 0; rank < 5; ++rank) {
    const RoundAssignment& a = all[rank];
    CHECK(a.round == 3);
    CHECK(a.restart_count == 2);
    CHECK(a.group_rank == rank);
    CHECK(a.group_world_size == 5);
    CHECK(a.base_rank == bases[rank]);
    CHECK(a.world_size == 11);
    std::vector<int> ranks;
    for (const auto& [peer, id] : a.peers) {
      ranks.push_back(peer);
      CHECK(id == state.participants[peer]);
    }
    CHECK(ranks == KnownRanks(rank, 5));
  }
}

TEST_CASE("RoundAssignment survives an encode/decode round trip", "[rendezvous][assignment]") {
  const std::vector<RoundAssignment> all =
      AssignRound(CompleteState(100), std::vector<int>(100, 8));
  for (const RoundAssignment& a : all) {
    std::string error;
    auto decoded = RoundAssignment::Decode(a.Encode(), &error);
    INFO(error);
    REQUIRE(decoded);
    CHECK(*decoded == a);
  }
  // A few hundred bytes whatever the size of the round.
  CHECK(all[57].Encode().size() < 400);
  // The hosts set aside travel with every member's assignment.
  RendezvousState state = CompleteState(4);
  state.quarantined = {"gone-1", "gone-2"};
  const RoundAssignment with = AssignRound(state, {1, 1, 1, 1})[3];
  CHECK(with.set_aside == state.quarantined);
  std::string error;
  auto decoded = RoundAssignment::Decode(with.Encode(), &error);
  REQUIRE(decoded);
  CHECK(*decoded == with);
  CHECK_FALSE(RoundAssignment::Decode(with.Encode() + "set_aside=a,,b\n", &error));
  // What a member makes of it, before reading its peers' records.
  const RendezvousResult result = ResultWithoutMembers(with);
  CHECK(result.group_rank == 3);
  CHECK(result.group_size == 4);
  CHECK(result.base_rank == with.base_rank);
  CHECK(result.world_size == with.world_size);
  CHECK(result.set_aside == with.set_aside);
  CHECK(result.members.empty());
}

TEST_CASE("RoundAssignment refuses what no completer writes", "[rendezvous][assignment]") {
  const RoundAssignment good = AssignRound(CompleteState(4), {1, 1, 1, 1})[2];
  std::string error;
  auto broken = [&](std::string text) { return RoundAssignment::Decode(text, &error); };
  std::string text = good.Encode();
  CHECK_FALSE(broken("round=1\n"));
  CHECK_THAT(error, Catch::Contains("restart_count"));

  auto replaced = [&](const std::string& field, const std::string& value) {
    std::string out = text;
    const auto at = out.find(field + "=");
    const auto end = out.find('\n', at);
    return out.replace(at, end - at, field + "=" + value);
  };
  CHECK_FALSE(broken(replaced("group_rank", "4")));
  CHECK_THAT(error, Catch::Contains("group_rank"));
  CHECK_FALSE(broken(replaced("base_rank", "4")));  // ranks 4..4 of a world of 4
  CHECK_THAT(error, Catch::Contains("base_rank"));
  CHECK_FALSE(broken(replaced("peer.0", "")));
  CHECK_THAT(error, Catch::Contains("peer.0"));
  CHECK_FALSE(
      broken("round=1\nrestart_count=0\ngroup_rank=0\ngroup_world_size=1\n"
             "base_rank=0\nworld_size=1\n"));  // no peer.0: not even itself
  CHECK_THAT(error, Catch::Contains("peer.0"));
}

}  // namespace
}  // namespace cpplaunch
