#include "rendezvous/core/seats.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/core/join_queue.h"
#include "rendezvous/core/join_steps.h"
#include "rendezvous/core/quarantine.h"
#include "rendezvous/core/round_assignment.h"
#include "rendezvous/core/waiting_line.h"

namespace cpplaunch {
namespace {

JoinRequest Node(std::string id, int min_nodes, int max_nodes, int64_t min_round = 0,
                 int lost_seat = -1) {
  JoinRequest request;
  request.node_id = std::move(id);
  request.min_nodes = min_nodes;
  request.max_nodes = max_nodes;
  request.last_call_timeout = std::chrono::milliseconds(1000);
  request.min_round = min_round;
  request.restart_count = static_cast<int>(min_round);  // every restart here follows a failure
  request.lost_seat = lost_seat;
  return request;
}

// An in-memory table standing in for the store key: applies writes as COMPARE_SET would.
struct Table {
  std::optional<RendezvousState> state;

  JoinDecision Step(const JoinRequest& me, int64_t now_ms = 0) {
    for (int i = 0; i < 10; ++i) {
      JoinDecision decision = DecideJoin(state, me, now_ms);
      if (decision.action != JoinAction::kWrite) return decision;
      REQUIRE(decision.next.version == (state ? state->version : 0) + 1);
      state = decision.next;
    }
    FAIL("DecideJoin kept writing");
    return {};
  }
  int GroupRank(const std::string& id) const { return GroupRankOf(*state, id); }
};

// Round 0 of a --nnodes=MIN:3 job with n2, n3, n4 (group ranks 0, 1, 2), complete.
Table RunningJob(int min_nodes) {
  Table table;
  for (const char* id : {"n2", "n3", "n4"}) table.Step(Node(id, min_nodes, 3));
  if (!table.state->complete) table.state = CompletedAtLastCall(*table.state, 5000);
  REQUIRE(table.state->complete);
  return table;
}

TEST_CASE("A spare takes the lost host's group rank and survivors keep theirs",
          "[rendezvous][seats]") {
  Table table = RunningJob(3);
  // n1 arrives at the full job: a spare. It sorts first, so a fresh sort would give it rank 0.
  CHECK(table.Step(Node("n1", 3, 3)).action == JoinAction::kWait);
  CHECK(table.state->wait_list.empty());  // a spare does not ask the job to restart
  // n3 (group rank 1) dies: the survivors come back to round 1 naming its seat.
  CHECK(table.Step(Node("n4", 3, 3, 1, 1)).action == JoinAction::kWait);
  CHECK(table.state->vacant == std::vector<int>{1});
  CHECK(table.Step(Node("n1", 3, 3)).action == JoinAction::kWait);  // joined round 1
  CHECK(table.state->RankOf("n1") >= 0);
  const JoinDecision done = table.Step(Node("n2", 3, 3, 1, 1));
  REQUIRE(done.action == JoinAction::kDone);
  CHECK(done.rank == 0);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n1", "n4"});
  CHECK(table.state->vacant.empty());
  CHECK(table.Step(Node("n4", 3, 3, 1, 1)).rank == 2);
  CHECK(table.Step(Node("n1", 3, 3)).rank == 1);
  // The workers' RANKs follow: n4's first RANK is still 2 x its local world size.
  const auto assignments = AssignRound(*table.state, {2, 2, 2});
  CHECK(assignments[2].base_rank == 4);
  CHECK(assignments[2].peers.front().second == "n2");
}

TEST_CASE("Survivors slower than two spares keep their seats; one spare waits",
          "[rendezvous][seats]") {
  Table table = RunningJob(3);
  table.Step(Node("n4", 3, 3, 1, 1));  // n3 lost
  CHECK(table.Step(Node("n0", 3, 3)).action == JoinAction::kWait);
  CHECK(table.Step(Node("n1", 3, 3)).action == JoinAction::kWait);
  CHECK(table.state->RankOf("n0") >= 0);
  CHECK(table.state->RankOf("n1") < 0);  // the only free seat is taken: n1 stays a spare
  const WaitingView view{"job", "n1", "the store 127.0.0.1:1", std::chrono::milliseconds(0),
                         std::chrono::seconds(60)};
  CHECK_THAT(WaitingLine(*table.state, view),
             Catch::Contains("2 joined [n0, n4]; the free places are taken (the others keep "
                             "theirs), this host waits as a spare; join timeout in 60"));
  CHECK_FALSE(table.state->complete);
  CHECK(table.Step(Node("n2", 3, 3, 1, 1)).action == JoinAction::kDone);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n0", "n4"});
  CHECK(table.Step(Node("n1", 3, 3)).action == JoinAction::kWait);  // full: waits
  CHECK(table.state->wait_list.empty());
}

TEST_CASE("A spare that dies before the round completes frees the seat for another",
          "[rendezvous][seats]") {
  Table table = RunningJob(3);
  table.Step(Node("n4", 3, 3, 1, 1));
  table.Step(Node("n0", 3, 3));
  CHECK(table.Step(Node("n1", 3, 3)).action == JoinAction::kWait);
  CHECK(table.state->RankOf("n1") < 0);
  table.state = WithoutNode(*table.state, "n0");  // its liveness key went with its connection
  CHECK(table.Step(Node("n1", 3, 3)).action == JoinAction::kWait);
  CHECK(table.state->RankOf("n1") >= 0);
  CHECK(table.Step(Node("n2", 3, 3, 1, 1)).action == JoinAction::kDone);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n1", "n4"});
}

TEST_CASE("A round whose seats are all taken completes without its last call",
          "[rendezvous][seats]") {
  Table table = RunningJob(2);  // --nnodes=2:3, completed at its last call with 3
  table.Step(Node("n4", 2, 3, 1, 1));
  table.Step(Node("n2", 2, 3, 1, 1));
  REQUIRE(table.state->last_call_deadline_ms != 0);  // MIN reached: the last call is armed
  const JoinDecision joined = table.Step(Node("n5", 2, 3, 0), 10);
  CHECK(table.state->complete);
  CHECK(joined.action == JoinAction::kDone);
  CHECK(table.GroupRank("n5") == 1);
}

TEST_CASE("Without a spare the round shrinks and closes ranks in their order",
          "[rendezvous][seats]") {
  Table table = RunningJob(2);
  // n2 (group rank 0) lost: n3 and n4 keep their order and move down one.
  table.Step(Node("n4", 2, 3, 1, 0));
  table.Step(Node("n3", 2, 3, 1, 0));
  REQUIRE_FALSE(table.state->complete);
  table.state = CompletedAtLastCall(*table.state, table.state->last_call_deadline_ms);
  REQUIRE(table.state);
  CHECK(table.state->seats == std::vector<std::string>{"n3", "n4"});
  CHECK(table.GroupRank("n3") == 0);
  CHECK(table.GroupRank("n4") == 1);
}

TEST_CASE("A host whose workers failed keeps its seat; a spare cannot take it",
          "[rendezvous][seats]") {
  Table table = RunningJob(3);
  table.Step(Node("n3", 3, 3, 1));  // worker failure: no lost seat
  CHECK(table.Step(Node("n1", 3, 3)).action == JoinAction::kWait);
  CHECK(table.state->RankOf("n1") < 0);
  table.Step(Node("n4", 3, 3, 1));
  CHECK(table.Step(Node("n2", 3, 3, 1)).action == JoinAction::kDone);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n3", "n4"});
}

TEST_CASE("Hosts joining a running elastic job come after the running ones",
          "[rendezvous][seats]") {
  Table table;
  table.Step(Node("n2", 2, 3));
  table.Step(Node("n4", 2, 3));
  table.state = CompletedAtLastCall(*table.state, table.state->last_call_deadline_ms);
  table.Step(Node("n1", 2, 3));  // the wait list: a membership change
  REQUIRE(table.state->IsWaiting("n1"));
  RendezvousState restarted = *table.state;
  JoinRequest n2 = Node("n2", 2, 3, 1);
  n2.restart_count = 0;
  table.Step(n2);
  table.Step(Node("n1", 2, 3));
  JoinRequest n4 = Node("n4", 2, 3, 1);
  n4.restart_count = 0;
  CHECK(table.Step(n4).action == JoinAction::kDone);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n4", "n1"});
}

TEST_CASE("Two hosts lost with one spare: the round fills one seat and shrinks",
          "[rendezvous][seats]") {
  Table table = RunningJob(2);
  // n3 and n4 die; the survivor's end names n3 only. n4 never comes back.
  table.Step(Node("n2", 2, 3, 1, 1));
  table.Step(Node("n1", 2, 3));
  REQUIRE_FALSE(table.state->complete);  // n4's seat is still reserved
  REQUIRE(table.state->last_call_deadline_ms != 0);
  table.state = CompletedAtLastCall(*table.state, table.state->last_call_deadline_ms);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n1"});
}

TEST_CASE("Seats of hosts that never come back lapse after the last-call timeout",
          "[rendezvous][seats]") {
  Table table = RunningJob(3);
  // n3 and n4 die; the end n2 saw names n3 only, so n4's seat is held for it at first.
  table.Step(Node("n2", 3, 3, 1, 1), 0);
  REQUIRE(table.state->seats_until_ms == 1000);
  table.Step(Node("n0", 3, 3), 0);
  const JoinDecision held = table.Step(Node("n1", 3, 3), 10);
  CHECK(held.action == JoinAction::kWait);
  CHECK(held.wake_at_ms == 1000);
  CHECK(table.state->RankOf("n1") < 0);
  CHECK(table.Step(Node("n1", 3, 3), 1000).action == JoinAction::kDone);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n0", "n1"});
}

TEST_CASE("Queued joins fill a lost seat as DecideJoin does", "[rendezvous][seats]") {
  Table table = RunningJob(3);
  const std::vector<JoinRequest> batch{Node("n4", 3, 3, 1, 1), Node("n0", 3, 3), Node("n1", 3, 3),
                                       Node("n2", 3, 3, 1, 1)};
  const Admission admission = AdmitJoins(table.state, batch, 0);
  CHECK(admission.admitted == std::vector<bool>{true, true, false, true});
  CHECK(admission.next.complete);
  CHECK(admission.next.seats == std::vector<std::string>{"n2", "n0", "n4"});
  CHECK(admission.next.vacant.empty());
}

TEST_CASE("Seats survive an encode/decode round trip and are checked", "[rendezvous][seats]") {
  RendezvousState state;
  state.min_nodes = 2;
  state.max_nodes = 3;
  state.participants = {"a", "c"};
  state.seats = {"c", "b", "a"};
  state.vacant = {1};
  std::string error;
  auto decoded = RendezvousState::Decode(state.Encode(), &error);
  REQUIRE(decoded);
  CHECK(*decoded == state);
  state.vacant = {3};
  CHECK_FALSE(RendezvousState::Decode(state.Encode(), &error));
  CHECK(error.find("vacant") != std::string::npos);
  state.vacant = {};
  state.complete = true;  // complete: the seats must be the participants
  CHECK_FALSE(RendezvousState::Decode(state.Encode(), &error));
  CHECK(error.find("permutation") != std::string::npos);
  state.seats = {"c", "a"};
  CHECK(RendezvousState::Decode(state.Encode(), &error));
  state.seats = {"c", "c"};
  CHECK_FALSE(RendezvousState::Decode(state.Encode(), &error));
  // The summary a waiting participant reads carries no seats.
  state.seats = {"c", "a"};
  auto summary = DecodeSummary(EncodeSummary(state), &error);
  REQUIRE(summary);
  CHECK(summary->state.seats.empty());
}

TEST_CASE("A queued join carries its lost seat; old lines read as none", "[rendezvous][seats]") {
  QueuedJoin join{Node("n4", 3, 3, 1, 1), 2};
  std::string error;
  auto parsed = ParseJoinQueue(EncodeJoinLine(join), 0, &error);
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 1);
  CHECK(parsed->front() == join);
  parsed = ParseJoinQueue("n4,2,3,3,1000,1,1\n", 0, &error);
  REQUIRE(parsed);
  CHECK(parsed->front().request.lost_seat == -1);
  // With the workers' command digest too (issue 27): both survive the round trip.
  join.request.lost_seat = 1;
  join.request.command_digest = "0123456789abcdef";
  CHECK(EncodeJoinLine(join) == "n4,2,3,3,1000,1,1,1,0123456789abcdef\n");
  parsed = ParseJoinQueue(EncodeJoinLine(join), 0, &error);
  REQUIRE(parsed);
  CHECK(parsed->front() == join);
  CHECK_FALSE(ParseJoinQueue("n4,2,3,3,1000,1,1,-2,ab\n", 0, &error));
}

TEST_CASE("One survivor forms the replacement round as the survivors' joins would",
          "[rendezvous][seats]") {
  Table joins = RunningJob(3);
  joins.Step(Node("n1", 3, 3));  // a spare
  joins.Step(Node("n0", 3, 3));  // another
  REQUIRE(joins.state->spares == std::vector<std::string>{"n0", "n1"});
  const RendezvousState running = *joins.state;
  // n3 (group rank 1) is lost: n4 alone writes round 1, complete, n0 in n3's seat.
  const auto formed = ReplacementRound(running, Node("n4", 3, 3, 1, 1), 0);
  REQUIRE(formed);
  CHECK(formed->complete);
  CHECK(formed->round == 1);
  CHECK(formed->restart_count == 1);
  CHECK(formed->version == running.version + 1);  // the spares wait for it
  CHECK(formed->epoch == running.epoch + 1);
  CHECK(formed->seats == std::vector<std::string>{"n2", "n0", "n4"});
  CHECK(formed->participants == std::vector<std::string>{"n0", "n2", "n4"});
  CHECK(formed->spares == std::vector<std::string>{"n1"});
  CHECK(IsQuarantined(*formed, "n3"));  // should its agent come back, it is refused
  // The same round as every survivor's join and the first spare's give.
  joins.Step(Node("n4", 3, 3, 1, 1));
  joins.Step(Node("n0", 3, 3));
  REQUIRE(joins.Step(Node("n2", 3, 3, 1, 1)).action == JoinAction::kDone);
  RendezvousState joined = *joins.state;
  joined.version = formed->version;
  joined.epoch = formed->epoch;
  CHECK(joined == *formed);
  // The spare finds its place in it; the other spare waits on.
  Table after{formed};
  CHECK(after.Step(Node("n0", 3, 3)).rank == 1);
  CHECK(after.Step(Node("n1", 3, 3)).action == JoinAction::kWait);
}

TEST_CASE("The replacement round is left to the joins when it is not that case",
          "[rendezvous][seats]") {
  Table table = RunningJob(3);
  CHECK_FALSE(ReplacementRound(*table.state, Node("n4", 3, 3, 1, 1), 0));  // no spare
  table.Step(Node("n1", 3, 3));
  const RendezvousState running = *table.state;
  REQUIRE(ReplacementRound(running, Node("n4", 3, 3, 1, 1), 0));
  CHECK_FALSE(ReplacementRound(running, Node("n4", 3, 3, 1), 0));     // no lost seat
  CHECK_FALSE(ReplacementRound(running, Node("n4", 3, 3, 2, 1), 0));  // not the next round
  CHECK_FALSE(ReplacementRound(running, Node("n3", 3, 3, 1, 1), 0));  // the lost one itself
  CHECK_FALSE(ReplacementRound(running, Node("n9", 3, 3, 1, 1), 0));  // not a member
  CHECK_FALSE(ReplacementRound(running, Node("n4", 2, 3, 1, 1), 0));  // other --nnodes
  CHECK_FALSE(ReplacementRound(running, Node("n4", 3, 3, 1, 3), 0));  // no such seat
  JoinRequest failed = Node("n4", 3, 3, 1, 1);
  failed.failed_seat = 0;
  CHECK_FALSE(ReplacementRound(running, failed, 0));
  RendezvousState waiting = running;
  waiting.wait_list = {"n5"};  // a host asked to join: the next round takes it too
  CHECK_FALSE(ReplacementRound(waiting, Node("n4", 3, 3, 1, 1), 0));
  CHECK_FALSE(ReplacementRound(Closed(running, "done"), Node("n4", 3, 3, 1, 1), 0));
  Table opened{running};
  opened.Step(Node("n4", 3, 3, 1, 1));  // a survivor's join opened round 1 already
  CHECK_FALSE(ReplacementRound(*opened.state, Node("n2", 3, 3, 1, 1), 0));
}

TEST_CASE("The seat a round's end names as lost", "[rendezvous][seats]") {
  RoundEnd end;
  end.node_rank = 2;
  end.kind = RoundEndKind::kPeerLost;
  CHECK(LostSeat(end) == 2);
  end.kind = RoundEndKind::kAgentStopped;
  CHECK(LostSeat(end) == 2);
  end.kind = RoundEndKind::kWorkerFailure;
  CHECK(LostSeat(end) == -1);
  end.kind = RoundEndKind::kMembershipChange;
  CHECK(LostSeat(end) == -1);
  RendezvousSettings settings;
  const JoinRequest me = JoinRequestFor(settings, RoundTransition{3, 1, true, 2});
  CHECK(me.lost_seat == 2);
}

}  // namespace
}  // namespace cpplaunch
