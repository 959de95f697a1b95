#include "rendezvous/core/rendezvous_state.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>

#include "rendezvous/core/seats.h"
#include "rendezvous/core/waiting_line.h"

namespace cpplaunch {
namespace {

JoinRequest Node(std::string id, int min_nodes, int max_nodes, int64_t min_round = 0,
                 int restart_count = 0) {
  JoinRequest request;
  request.node_id = std::move(id);
  request.min_nodes = min_nodes;
  request.max_nodes = max_nodes;
  request.last_call_timeout = std::chrono::milliseconds(1000);
  request.min_round = min_round;
  request.restart_count = restart_count;
  return request;
}

// An in-memory table standing in for the store key: applies writes as COMPARE_SET would.
struct Table {
  std::optional<RendezvousState> state;

  // Runs DecideJoin until the node has to wait or is done; returns the last decision.
  JoinDecision Step(const JoinRequest& me, int64_t now_ms) {
    for (int i = 0; i < 10; ++i) {
      JoinDecision decision = DecideJoin(state, me, now_ms);
      if (decision.action != JoinAction::kWrite) return decision;
      REQUIRE(decision.next.version == (state ? state->version : 0) + 1);
      state = decision.next;
    }
    FAIL("DecideJoin kept writing");
    return {};
  }
};

TEST_CASE("Rendezvous state survives an encode/decode round trip", "[rendezvous][state]") {
  RendezvousState state;
  state.version = 7;
  state.round = 3;
  state.restart_count = 2;
  state.min_nodes = 2;
  state.max_nodes = 4;
  state.complete = true;
  state.last_call_deadline_ms = 1234567890123;
  state.participants = {"10.0.0.1_12", "10.0.0.2_99"};
  state.wait_list = {"[::1]_5"};
  state.closed_reason = "line one\nline two";
  std::string error;
  auto decoded = RendezvousState::Decode(state.Encode(), &error);
  REQUIRE(decoded);
  state.closed_reason = "line one line two";
  CHECK(*decoded == state);
}

TEST_CASE("Empty participant and wait lists decode as empty, not as one empty id",
          "[rendezvous][state]") {
  RendezvousState state;
  state.min_nodes = 1;
  state.max_nodes = 2;
  state.participants = {};
  state.wait_list = {"a"};
  std::string error;
  auto decoded = RendezvousState::Decode(state.Encode(), &error);
  REQUIRE(decoded);
  CHECK(decoded->participants.empty());
  CHECK(decoded->wait_list == std::vector<std::string>{"a"});
}

TEST_CASE("Rendezvous state decoding rejects garbage", "[rendezvous][state]") {
  std::string error;
  CHECK_FALSE(RendezvousState::Decode("Y2FuaW1hZGFt", &error));
  CHECK_FALSE(error.empty());
  CHECK_FALSE(RendezvousState::Decode("version=x\n", &error));
  CHECK_FALSE(RendezvousState::Decode("version=1\n", &error));
}

RendezvousState ValidState() {
  RendezvousState state;
  state.version = 7;
  state.round = 3;
  state.restart_count = 2;
  state.min_nodes = 2;
  state.max_nodes = 3;
  state.participants = {"10.0.0.1_12", "10.0.0.2_99"};
  state.wait_list = {"[::1]_5"};
  return state;
}

// Decodes `text` and returns the error ("" when it decoded).
std::string StateError(const std::string& text) {
  std::string error;
  return RendezvousState::Decode(text, &error) ? std::string() : error;
}

template <typename Change>
std::string StateError(Change change) {
  RendezvousState state = ValidState();
  change(state);
  return StateError(state.Encode());
}

TEST_CASE("Rendezvous state decoding refuses counts and lists outside the record limits",
          "[rendezvous][state]") {
  using S = RendezvousState;
  CHECK(StateError([](S&) {}).empty());
  CHECK(StateError([](S& s) { s.version = -1; }) ==
        "rendezvous state field 'version' is -1, outside 0..9223372036854775807");
  CHECK(StateError([](S& s) { s.round = -1; }).find("'round'") != std::string::npos);
  CHECK(StateError([](S& s) { s.round = INT64_C(1) << 40; }).find("'round'") != std::string::npos);
  CHECK(StateError([](S& s) { s.restart_count = -3; }) ==
        "rendezvous state field 'restart_count' is -3, outside 0..2147483647");
  CHECK(StateError([](S& s) { s.min_nodes = 0; }).find("'min_nodes'") != std::string::npos);
  CHECK(StateError([](S& s) { s.max_nodes = 1; }) ==
        "rendezvous state field 'max_nodes' is 1, outside 2..1048576");
  CHECK(StateError([](S& s) { s.last_call_deadline_ms = -1; }).find("last_call_deadline_ms") !=
        std::string::npos);
  CHECK(StateError([](S& s) {
          s.participants = {"a", "b", "c", "d"};
        }) == "rendezvous state field 'participants' has 4 node ids, more than 3");
  CHECK(StateError([](S& s) {
          s.participants = {"b", "a"};
        }) == "rendezvous state field 'participants' is not sorted without duplicates");
  CHECK(StateError([](S& s) {
          s.participants = {"a", "a"};
        }).find("not sorted") != std::string::npos);
  CHECK(StateError([](S& s) { s.wait_list = {std::string(513, 'x')}; }) ==
        "rendezvous state field 'wait_list' holds an empty or overlong node id");
  CHECK(StateError([](S& s) {
          s.closed_reason = std::string(16385, 'r');
        }).find("'closed_reason'") != std::string::npos);
  // Flags are 0 or 1, and an empty id inside a list is refused.
  std::string text = ValidState().Encode();
  CHECK(StateError(text + "complete=2\n") ==
        "rendezvous state field 'complete' is 2, outside 0..1");
  CHECK(StateError(text + "participants=a,,b\n").find("empty or overlong") != std::string::npos);
}

TEST_CASE("A fixed-size rendezvous completes when the last node joins", "[rendezvous][state]") {
  Table table;
  CHECK(table.Step(Node("c", 3, 3), 0).action == JoinAction::kWait);
  CHECK(table.Step(Node("a", 3, 3), 0).action == JoinAction::kWait);
  JoinDecision last = table.Step(Node("b", 3, 3), 0);
  REQUIRE(last.action == JoinAction::kDone);
  CHECK(last.rank == 1);
  CHECK(table.state->complete);
  CHECK(table.state->last_call_deadline_ms == 0);
  // Ranks follow the sorted node ids, whatever the join order.
  CHECK(table.Step(Node("a", 3, 3), 0).rank == 0);
  CHECK(table.Step(Node("c", 3, 3), 0).rank == 2);
}

TEST_CASE("An elastic rendezvous completes at MIN after the last call", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 2, 4), 1000);
  JoinDecision second = table.Step(Node("b", 2, 4), 5000);
  REQUIRE(second.action == JoinAction::kWait);
  CHECK(second.wake_at_ms == 6000);  // last call armed when MIN was reached
  CHECK(table.Step(Node("a", 2, 4), 5999).action == JoinAction::kWait);
  // A third node before the deadline does not extend it.
  CHECK(table.Step(Node("c", 2, 4), 5500).wake_at_ms == 6000);
  JoinDecision done = table.Step(Node("a", 2, 4), 6000);
  REQUIRE(done.action == JoinAction::kDone);
  CHECK(table.state->participants.size() == 3);
}

TEST_CASE("An elastic rendezvous completes at MAX without waiting", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 1, 2), 0);
  CHECK(table.Step(Node("b", 1, 2), 10).action == JoinAction::kDone);
}

TEST_CASE("A node arriving at a complete round goes to the wait list", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 1, 3), 0);
  table.Step(Node("b", 1, 3), 0);
  table.Step(Node("a", 1, 3), 1000);  // last call passed: complete with a, b
  REQUIRE(table.state->complete);
  CHECK_FALSE(MembershipChangePending(*table.state, 0));
  CHECK(table.Step(Node("c", 1, 3), 1500).action == JoinAction::kWait);
  CHECK(table.state->wait_list == std::vector<std::string>{"c"});
  CHECK(MembershipChangePending(*table.state, 0));
  // The participants restart for round 1 with the same restart count; c joins it.
  table.Step(Node("b", 1, 3, 1, 0), 2000);
  CHECK(table.state->round == 1);
  CHECK(table.state->wait_list.empty());
  CHECK(MembershipChangePending(*table.state, 0));
  table.Step(Node("c", 1, 3), 2001);
  JoinDecision done = table.Step(Node("a", 1, 3, 1, 0), 2002);
  REQUIRE(done.action == JoinAction::kDone);  // MAX reached
  CHECK(table.state->restart_count == 0);
  CHECK(table.state->participants == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("A full round keeps an extra node waiting without a restart", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 1, 1), 0);
  CHECK(table.Step(Node("b", 1, 1), 0).action == JoinAction::kWait);
  CHECK(table.state->wait_list.empty());
}

TEST_CASE("A failure restart opens a new round with the higher restart count",
          "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 2, 2), 0);
  table.Step(Node("b", 2, 2), 0);
  REQUIRE(table.state->complete);
  // b saw a membership change first (same count), a saw the failure (count + 1).
  table.Step(Node("b", 2, 2, 1, 0), 0);
  JoinDecision done = table.Step(Node("a", 2, 2, 1, 1), 0);
  REQUIRE(done.action == JoinAction::kDone);
  CHECK(table.state->round == 1);
  CHECK(table.state->restart_count == 1);
  CHECK(table.Step(Node("b", 2, 2, 1, 0), 0).action == JoinAction::kDone);
}

TEST_CASE("A participant of an incomplete round raises the restart count", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 2, 2, 0, 0), 0);
  table.Step(Node("a", 2, 2, 0, 2), 0);
  CHECK(table.state->restart_count == 2);
}

TEST_CASE("A node with a different --nnodes is refused with both values", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 2, 2), 0);
  JoinDecision refused = table.Step(Node("b", 3, 3), 0);
  REQUIRE(refused.action == JoinAction::kMismatch);
  CHECK(refused.message.find("--nnodes=3") != std::string::npos);
  CHECK(refused.message.find("--nnodes=2") != std::string::npos);
}

TEST_CASE("A node whose workers run another command is refused; one without a digest is not",
          "[rendezvous][state]") {
  Table table;
  JoinRequest first = Node("a", 1, 2);
  first.command_digest = "0123456789abcdef";
  table.Step(first, 0);
  CHECK(table.state->command_digest == "0123456789abcdef");
  JoinRequest other = Node("b", 1, 2);
  other.command_digest = "fedcba9876543210";
  JoinDecision refused = table.Step(other, 0);
  REQUIRE(refused.action == JoinAction::kMismatch);
  CHECK(refused.message ==
        "this host's workers run another script than the job's first host's: two jobs with the "
        "same --rdzv-id? give each job its own --rdzv-id");
  // The digest survives the store and a new round.
  std::string error;
  auto decoded = RendezvousState::Decode(table.state->Encode(), &error);
  REQUIRE(decoded);
  CHECK(decoded->command_digest == "0123456789abcdef");
  // An agent that predates the digest (or a state without one) is not compared.
  CHECK(table.Step(Node("c", 1, 2), 0).action != JoinAction::kMismatch);
  JoinRequest same = Node("d", 1, 2);
  same.command_digest = "0123456789abcdef";
  CHECK(table.Step(same, 0).action != JoinAction::kMismatch);
}

TEST_CASE("A closed rendezvous admits nobody", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 1, 2), 0);
  table.state = Closed(*table.state, "job failed on host x");
  JoinDecision refused = table.Step(Node("b", 1, 2), 0);
  REQUIRE(refused.action == JoinAction::kClosed);
  CHECK(refused.message == "job failed on host x");
}

TEST_CASE("A node leaving an incomplete round disarms the last call below MIN",
          "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 2, 3), 0);
  table.Step(Node("b", 2, 3), 0);
  REQUIRE(table.state->last_call_deadline_ms != 0);
  RendezvousState left = WithoutNode(*table.state, "b");
  CHECK(left.participants == std::vector<std::string>{"a"});
  CHECK(left.last_call_deadline_ms == 0);
  CHECK(left.version == table.state->version + 1);
}

TEST_CASE("Many nodes joining in any order agree on ranks", "[rendezvous][state]") {
  Table table;
  std::vector<std::string> ids;
  for (int i = 0; i < 64; ++i) ids.push_back("node" + std::to_string((i * 37) % 64 + 100));
  for (const auto& id : ids) table.Step(Node(id, 64, 64), 0);
  REQUIRE(table.state->complete);
  std::map<int, std::string> by_rank;
  for (const auto& id : ids) by_rank[table.Step(Node(id, 64, 64), 0).rank] = id;
  CHECK(by_rank.size() == 64);
  CHECK(by_rank.begin()->second == "node100");
}

TEST_CASE("The epoch moves only on what waiting participants must see", "[rendezvous][state]") {
  Table table;
  table.Step(Node("a", 3, 4), 0);
  const int64_t first = table.state->epoch;
  table.Step(Node("b", 3, 4), 0);
  CHECK(table.state->epoch == first);  // a join that neither arms nor completes
  table.Step(Node("c", 3, 4), 0);      // MIN reached: the last call is armed
  CHECK(table.state->epoch == first + 1);
  table.Step(Node("d", 3, 4), 0);  // MAX: complete
  CHECK(table.state->epoch == first + 2);
  CHECK(Closed(*table.state, "done").epoch == first + 3);

  Table shrinking;
  shrinking.Step(Node("a", 2, 3), 0);
  shrinking.Step(Node("b", 2, 3), 0);
  const int64_t armed = shrinking.state->epoch;
  CHECK(WithoutNode(*shrinking.state, "b").epoch == armed + 1);  // the last call is disarmed
  CHECK(WithoutNode(WithoutNode(*shrinking.state, "b"), "a").epoch == armed + 1);
}

TEST_CASE("A state without an epoch (an older agent's) decodes with epoch 0",
          "[rendezvous][state]") {
  RendezvousState state;
  state.min_nodes = state.max_nodes = 1;
  state.epoch = 5;
  std::string text = state.Encode();
  const auto at = text.find("epoch=5\n");
  REQUIRE(at != std::string::npos);
  text.erase(at, 8);
  std::string error;
  auto decoded = RendezvousState::Decode(text, &error);
  REQUIRE(decoded);
  CHECK(decoded->epoch == 0);
  std::string negative = state.Encode();
  negative.replace(negative.find("epoch=5"), 7, "epoch=-1");
  CHECK_FALSE(RendezvousState::Decode(negative, &error));
}

TEST_CASE("A summary keeps eight ids and the count, and reads back as a state",
          "[rendezvous][state]") {
  RendezvousState state;
  state.version = 4;
  state.epoch = 2;
  state.min_nodes = 2;
  state.max_nodes = 100;
  state.last_call_deadline_ms = 1234;
  for (int i = 10; i < 30; ++i) state.participants.push_back("n" + std::to_string(i));
  std::string error;
  auto summary = DecodeSummary(EncodeSummary(state), &error);
  INFO(error);
  REQUIRE(summary);
  CHECK(summary->joined == 20);
  CHECK(summary->state.participants.size() == 8);
  CHECK(summary->state.participants.front() == "n10");
  CHECK(summary->state.epoch == 2);
  CHECK(summary->state.last_call_deadline_ms == 1234);
  // A plain state is not a summary: the count is missing.
  CHECK_FALSE(DecodeSummary(state.Encode(), &error));
  CHECK_THAT(error, Catch::Contains("joined"));
  // The progress line counts every participant, not the eight it names.
  WaitingView view{"job",
                   "n99",
                   "the store 127.0.0.1:1",
                   std::chrono::milliseconds(5000),
                   std::chrono::seconds(60),
                   summary->joined};
  const std::string line = WaitingLine(summary->state, view);
  CHECK_THAT(line, Catch::Contains("20 joined [n10, n11"));
  CHECK_THAT(line, Catch::Contains("... (12 more)"));
}

TEST_CASE("The last call completes the round once it expired with MIN participants",
          "[rendezvous][state]") {
  RendezvousState state;
  state.version = 3;
  state.epoch = 1;
  state.min_nodes = 2;
  state.max_nodes = 4;
  state.participants = {"a", "b"};
  state.last_call_deadline_ms = 1000;
  CHECK_FALSE(CompletedAtLastCall(state, 999));
  auto done = CompletedAtLastCall(state, 1000);
  REQUIRE(done);
  CHECK(done->complete);
  CHECK(done->last_call_deadline_ms == 0);
  CHECK(done->version == 4);
  CHECK(done->epoch == 2);
  state.participants = {"a"};  // one left since: below MIN
  CHECK_FALSE(CompletedAtLastCall(state, 2000));
}

TEST_CASE("Removing several nodes at once is one version step", "[rendezvous][state]") {
  RendezvousState state;
  state.version = 9;
  state.epoch = 4;
  state.min_nodes = 3;
  state.max_nodes = 5;
  state.participants = {"a", "b", "c", "d"};
  state.last_call_deadline_ms = 500;
  const RendezvousState without = WithoutNodes(state, {"b", "d"});
  CHECK(without.participants == std::vector<std::string>{"a", "c"});
  CHECK(without.version == 10);
  CHECK(without.last_call_deadline_ms == 0);  // below MIN: the last call is disarmed
  CHECK(without.epoch == 5);
}

}  // namespace
}  // namespace cpplaunch

namespace cpplaunch {
namespace {

RendezvousState CompleteRound(std::vector<std::string> participants, int min_nodes, int max_nodes) {
  RendezvousState state;
  state.version = 7;
  state.epoch = 3;
  state.round = 2;
  state.restart_count = 1;
  state.min_nodes = min_nodes;
  state.max_nodes = max_nodes;
  state.complete = true;
  state.participants = std::move(participants);
  return state;
}

TEST_CASE("ReformedWithout: the next round without the dropped member, complete at MIN",
          "[rendezvous][state]") {
  const auto next = ReformedWithout(CompleteRound({"a", "b", "c"}, 2, 3), {"b"});
  CHECK(next.round == 3);
  CHECK(next.complete);
  CHECK(next.participants == std::vector<std::string>{"a", "c"});
  CHECK(next.restart_count == 1);  // nothing failed: no restart consumed
  CHECK(next.version == 8);
  CHECK(next.epoch == 4);
  CHECK(next.last_call_deadline_ms == 0);
}

TEST_CASE("ReformedWithout: below MIN the next round is open for more hosts",
          "[rendezvous][state]") {
  const auto next = ReformedWithout(CompleteRound({"a", "b", "c"}, 3, 4), {"c"});
  CHECK(next.round == 3);
  CHECK_FALSE(next.complete);
  CHECK(next.participants == std::vector<std::string>{"a", "b"});
  // The dropped host's seat is vacant (seats.h): a host joining later takes it, and the round
  // completes at once, every seat filled, with the others' group ranks as before.
  CHECK(next.seats == std::vector<std::string>{"a", "b", "c"});
  CHECK(next.vacant == std::vector<int>{2});
  const auto joined = DecideJoin(next, Node("d", 3, 4, 3, 1), 1000);
  REQUIRE(joined.action == JoinAction::kWrite);
  CHECK(joined.next.complete);
  CHECK(GroupOrder(joined.next) == std::vector<std::string>{"a", "b", "d"});
}

TEST_CASE("ReformedWithout: waiting hosts take the free places up to MAX", "[rendezvous][state]") {
  auto state = CompleteRound({"a", "b", "c"}, 2, 3);
  state.wait_list = {"d", "e"};
  const auto next = ReformedWithout(state, {"a"});
  CHECK(next.complete);
  CHECK(next.participants == std::vector<std::string>{"b", "c", "d"});
  CHECK(next.wait_list == std::vector<std::string>{"e"});
  // The survivors keep their group ranks; the first waiting host takes the dropped one's.
  CHECK(GroupOrder(next) == std::vector<std::string>{"d", "b", "c"});
  CHECK(next.vacant.empty());
  std::string error;
  CHECK(RendezvousState::Decode(next.Encode(), &error).has_value());
}

TEST_CASE("ReformedWithout: without a waiting host the ranks close up in their old order",
          "[rendezvous][state]") {
  auto state = CompleteRound({"a", "b", "c"}, 2, 3);
  state.seats = {"c", "a", "b"};  // a round that took a spare earlier
  const auto next = ReformedWithout(state, {"a"});
  REQUIRE(next.complete);
  CHECK(GroupOrder(next) == std::vector<std::string>{"c", "b"});
  std::string error;
  CHECK(RendezvousState::Decode(next.Encode(), &error).has_value());
}

TEST_CASE("ReformedWithout leaves a round that is not complete and open as it is",
          "[rendezvous][state]") {
  auto open = CompleteRound({"a", "b"}, 2, 3);
  open.complete = false;
  auto next = ReformedWithout(open, {"a"});
  CHECK(next.round == 2);
  CHECK(next.participants == open.participants);
  auto closed = Closed(CompleteRound({"a", "b"}, 2, 3), "done");
  CHECK(ReformedWithout(closed, {"a"}).round == 2);
}

}  // namespace
}  // namespace cpplaunch
