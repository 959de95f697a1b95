#include "rendezvous/core/segments.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/core/join_queue.h"
#include "rendezvous/core/seats.h"

namespace cpplaunch {
namespace {

// A host of a --nnodes=3:3 job in `segment`, asking for `round` after a round that lost the
// host at `lost_seat` (-1: none).
JoinRequest InSegment(std::string id, std::string segment, int64_t round = 0, int lost_seat = -1) {
  JoinRequest request;
  request.node_id = std::move(id);
  request.segment = std::move(segment);
  request.min_nodes = 3;
  request.max_nodes = 3;
  request.last_call_timeout = std::chrono::milliseconds(1000);
  request.min_round = round;
  request.restart_count = static_cast<int>(round);
  request.lost_seat = lost_seat;
  return request;
}

// The store key, applying each write as COMPARE_SET would, at wall-clock `now_ms`.
struct Table {
  std::optional<RendezvousState> state;
  int64_t now_ms = 0;

  JoinDecision Step(const JoinRequest& me) {
    for (int i = 0; i < 10; ++i) {
      JoinDecision decision = DecideJoin(state, me, now_ms);
      if (decision.action != JoinAction::kWrite) return decision;
      state = decision.next;
    }
    FAIL("DecideJoin kept writing");
    return {};
  }
};

// Round 0: n2 (rack-a), n3 (rack-b), n4 (rack-a) at group ranks 0, 1, 2; spares n0 (rack-a) and
// n1 (rack-b) wait. n0 sorts first: without segments it would take any vacant seat.
Table RacksWithSpares() {
  Table table;
  table.Step(InSegment("n2", "rack-a"));
  table.Step(InSegment("n3", "rack-b"));
  table.Step(InSegment("n4", "rack-a"));
  REQUIRE(table.state->complete);
  table.Step(InSegment("n0", "rack-a"));
  table.Step(InSegment("n1", "rack-b"));
  REQUIRE(table.state->spares == std::vector<std::string>{"n0", "n1"});
  return table;
}

TEST_CASE("A lost host's seat goes to a spare of its segment, though another comes first",
          "[rendezvous][segments]") {
  Table table = RacksWithSpares();
  // n3 (rack-b, group rank 1) is lost; the survivors reopen with its seat vacant.
  table.Step(InSegment("n2", "rack-a", 1, 1));
  table.Step(InSegment("n4", "rack-a", 1, 1));
  REQUIRE(table.state->vacant == std::vector<int>{1});
  // n0 of rack-a asks first: the seat is rack-b's while a rack-b spare waits.
  CHECK(table.Step(InSegment("n0", "rack-a")).action == JoinAction::kWait);
  CHECK(table.state->RankOf("n0") < 0);
  table.Step(InSegment("n1", "rack-b"));
  REQUIRE(table.state->complete);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n1", "n4"});
  CHECK(table.state->spares == std::vector<std::string>{"n0"});
  CHECK(SegmentOf(*table.state, "n1") == "rack-b");
}

TEST_CASE("Without a spare of its segment, any spare takes a lost host's seat",
          "[rendezvous][segments]") {
  Table table = RacksWithSpares();
  // n4 (rack-a, group rank 2) is lost, and n0, the rack-a spare, left: n1 of rack-b takes the
  // seat at once.
  table.state = WithoutNode(*table.state, "n0");
  table.Step(InSegment("n2", "rack-a", 1, 2));
  table.Step(InSegment("n3", "rack-b", 1, 2));
  table.Step(InSegment("n1", "rack-b"));
  REQUIRE(table.state->complete);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n3", "n1"});
}

TEST_CASE("The replacement round seats a spare of the lost host's segment",
          "[rendezvous][segments]") {
  const RendezvousState running = *RacksWithSpares().state;
  // n3 (rack-b) lost: n1 of rack-b, though n0 sorts first.
  auto formed = ReplacementRound(running, InSegment("n2", "rack-a", 1, 1), 0);
  REQUIRE(formed);
  CHECK(formed->seats == std::vector<std::string>{"n2", "n1", "n4"});
  CHECK(formed->spares == std::vector<std::string>{"n0"});
  // n4 (rack-a) lost: n0 of rack-a.
  formed = ReplacementRound(running, InSegment("n2", "rack-a", 1, 2), 0);
  REQUIRE(formed);
  CHECK(formed->seats == std::vector<std::string>{"n2", "n3", "n0"});
  // No spare of rack-b left: the first spare by node id.
  formed = ReplacementRound(WithoutNode(running, "n1"), InSegment("n2", "rack-a", 1, 1), 0);
  REQUIRE(formed);
  CHECK(formed->seats == std::vector<std::string>{"n2", "n0", "n4"});
}

TEST_CASE("A seat bound to a segment is free for any spare once the reservations lapse",
          "[rendezvous][segments]") {
  Table table = RacksWithSpares();
  table.Step(InSegment("n2", "rack-a", 1, 1));
  table.Step(InSegment("n4", "rack-a", 1, 1));
  // n1, the rack-b spare, died without its removal (its record is stale): n0 waits until the
  // seats' reservations lapse (last_call_timeout after the round opened), then takes the seat.
  CHECK(table.Step(InSegment("n0", "rack-a")).action == JoinAction::kWait);
  table.now_ms = table.state->seats_until_ms;
  table.Step(InSegment("n0", "rack-a"));
  REQUIRE(table.state->complete);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n0", "n4"});
}

TEST_CASE("Segments travel in the state and in queued joins; bad ones are refused",
          "[rendezvous][segments]") {
  Table table = RacksWithSpares();
  std::string error;
  const auto decoded = RendezvousState::Decode(table.state->Encode(), &error);
  REQUIRE(decoded);
  CHECK(*decoded == *table.state);
  CHECK(decoded->segments.size() == 5);
  for (const char* bad : {"n1", "n1=", "=a", "n2=a,n1=b", "n1=a,n1=b", "n1=a b", "n1=a,b"}) {
    CAPTURE(bad);
    CHECK_FALSE(DecodeSegments(bad));
  }
  CHECK(IsSegmentName("nvl72-rack3/leaf_2:x.y"));
  CHECK_FALSE(IsSegmentName(std::string(65, 'a')));
  CHECK_FALSE(IsSegmentName("a,b"));

  QueuedJoin join;
  join.attempt = 1;
  join.request = InSegment("n9", "rack-b");
  const auto parsed = ParseJoinQueue(EncodeJoinLine(join), 0, &error);
  REQUIRE(parsed);
  CHECK(parsed->front() == join);
  CHECK(parsed->front().request.quarantine_after == join.request.quarantine_after);
}

TEST_CASE("The admitting host places a batch by segment too", "[rendezvous][segments]") {
  Table table = RacksWithSpares();
  table.Step(InSegment("n2", "rack-a", 1, 1));
  table.Step(InSegment("n4", "rack-a", 1, 1));
  const Admission admission =
      AdmitJoins(table.state, {InSegment("n0", "rack-a"), InSegment("n1", "rack-b")}, 0);
  CHECK(admission.admitted == std::vector<bool>{false, true});
  CHECK(admission.next.complete);
  CHECK(admission.next.seats == std::vector<std::string>{"n2", "n1", "n4"});
}

}  // namespace
}  // namespace cpplaunch
