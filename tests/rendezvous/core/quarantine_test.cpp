#include "rendezvous/core/quarantine.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/core/join_queue.h"
#include "rendezvous/core/join_steps.h"
#include "rendezvous/core/seats.h"

namespace cpplaunch {
namespace {

// A host of a --nnodes=3:3 job asking for `round`, after a round whose workers failed first on
// group rank `failed_seat` (-1: none) or whose host at `lost_seat` was lost.
JoinRequest Host(std::string id, int64_t round = 0, int failed_seat = -1, int lost_seat = -1,
                 int quarantine_after = 2) {
  JoinRequest request;
  request.node_id = std::move(id);
  request.min_nodes = 3;
  request.max_nodes = 3;
  request.last_call_timeout = std::chrono::milliseconds(1000);
  request.min_round = round;
  request.restart_count = static_cast<int>(round);
  request.failed_seat = failed_seat;
  request.lost_seat = lost_seat;
  request.quarantine_after = quarantine_after;
  return request;
}

// The store key, applying each write as COMPARE_SET would.
struct Table {
  std::optional<RendezvousState> state;

  JoinDecision Step(const JoinRequest& me) {
    for (int i = 0; i < 10; ++i) {
      JoinDecision decision = DecideJoin(state, me, 0);
      if (decision.action != JoinAction::kWrite) return decision;
      state = decision.next;
    }
    FAIL("DecideJoin kept writing");
    return {};
  }
  // Every host of `ids` rejoins `round` after a failure of `failed_seat`'s workers; returns each
  // one's decision, in order.
  std::vector<JoinDecision> Rejoin(const std::vector<std::string>& ids, int64_t round,
                                   int failed_seat, int quarantine_after = 2) {
    std::vector<JoinDecision> out;
    for (const auto& id : ids)
      out.push_back(Step(Host(id, round, failed_seat, -1, quarantine_after)));
    return out;
  }
};

// Round 0 of n2, n3, n4 (group ranks 0, 1, 2), complete.
Table RunningJob() {
  Table table;
  for (const char* id : {"n2", "n3", "n4"}) table.Step(Host(id));
  REQUIRE(table.state->complete);
  return table;
}

TEST_CASE("A host whose workers failed first twice is set aside for a waiting spare",
          "[rendezvous][quarantine]") {
  Table table = RunningJob();
  CHECK(table.Step(Host("n1")).action == JoinAction::kWait);  // the job is full: a spare
  CHECK(table.state->spares == std::vector<std::string>{"n1"});
  CHECK(table.state->wait_list.empty());  // a spare does not restart the job

  // Round 0 fails on n3 (group rank 1): one strike, n3 keeps its seat.
  table.Rejoin({"n2", "n3", "n4"}, 1, 1);
  REQUIRE(table.state->complete);
  CHECK(StrikesOf(*table.state, "n3") == 1);
  CHECK(table.state->quarantined.empty());
  CHECK(GroupRankOf(*table.state, "n3") == 1);
  CHECK(table.Step(Host("n1")).action == JoinAction::kWait);

  // Round 1 fails on n3 again: the second strike sets it aside, and n1 takes group rank 1.
  CHECK(table.Step(Host("n4", 2, 1)).action == JoinAction::kWait);
  CHECK(table.state->quarantined == std::vector<std::string>{"n3"});
  CHECK(table.state->vacant == std::vector<int>{1});
  const JoinDecision refused = table.Step(Host("n3", 2, 1));
  CHECK(refused.action == JoinAction::kQuarantined);
  CHECK(refused.message.find("its workers failed first in 2 attempt(s)") != std::string::npos);
  CHECK(table.state->RankOf("n3") < 0);
  table.Step(Host("n1"));
  const JoinDecision done = table.Step(Host("n2", 2, 1));
  REQUIRE(done.action == JoinAction::kDone);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n1", "n4"});
  CHECK(table.state->spares.empty());
  // For the rest of the job: a later round refuses it too.
  CHECK(table.Step(Host("n3", 3, -1)).action == JoinAction::kQuarantined);
}

TEST_CASE("Without a spare a failing host keeps its seat until one comes",
          "[rendezvous][quarantine]") {
  Table table = RunningJob();
  table.Rejoin({"n2", "n3", "n4"}, 1, 1);
  table.Rejoin({"n2", "n3", "n4"}, 2, 1);
  REQUIRE(table.state->complete);
  CHECK(StrikesOf(*table.state, "n3") == 2);
  CHECK(table.state->quarantined.empty());  // a quarantine must not shrink the job
  CHECK(GroupRankOf(*table.state, "n3") == 1);
  // A spare arrives; the next failure of n3 sets it aside.
  table.Step(Host("n9"));
  const auto decisions = table.Rejoin({"n2", "n3", "n4"}, 3, 1);
  CHECK(decisions[1].action == JoinAction::kQuarantined);
  table.Step(Host("n9"));
  REQUIRE(table.state->complete);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n9", "n4"});
}

TEST_CASE("quarantine_after=0 never sets a host aside", "[rendezvous][quarantine]") {
  Table table = RunningJob();
  table.Step(Host("n1"));
  for (int64_t round = 1; round <= 3; ++round) table.Rejoin({"n2", "n3", "n4"}, round, 1, 0);
  REQUIRE(table.state->complete);
  CHECK(StrikesOf(*table.state, "n3") == 3);
  CHECK(table.state->quarantined.empty());
  CHECK(table.state->spares == std::vector<std::string>{"n1"});
}

TEST_CASE("A spare that left is no longer counted, so nobody is set aside for it",
          "[rendezvous][quarantine]") {
  Table table = RunningJob();
  table.Step(Host("n1"));
  table.state = WithoutNode(*table.state, "n1");  // its join timed out, or it died waiting
  CHECK(table.state->spares.empty());
  table.Rejoin({"n2", "n3", "n4"}, 1, 1);
  table.Rejoin({"n2", "n3", "n4"}, 2, 1);
  CHECK(table.state->quarantined.empty());
  CHECK(GroupRankOf(*table.state, "n3") == 1);
}

TEST_CASE("A write that sets a host aside names the spares to check alive first",
          "[rendezvous][quarantine]") {
  Table table = RunningJob();
  table.Step(Host("n1"));
  table.Rejoin({"n2", "n3", "n4"}, 1, 1);
  const RendezvousState before = *table.state;
  const JoinDecision opening = DecideJoin(before, Host("n4", 2, 1), 0);
  REQUIRE(opening.action == JoinAction::kWrite);
  CHECK(SparesToConfirm(before, opening.next) == std::vector<std::string>{"n1"});
  // What the writer checks: those spares, without itself (the round is not completed here).
  CHECK(NodesToConfirm(before, opening.next, "n4") == std::vector<std::string>{"n1"});
  CHECK(NodesToConfirm(before, opening.next, "n1").empty());
  // Writes that set nobody aside rely on no spare.
  CHECK(SparesToConfirm(std::nullopt, before).empty());
  CHECK(SparesToConfirm(opening.next, opening.next).empty());
  // The writer found n1 dead: without it, the same opening sets nobody aside.
  const RendezvousState without = WithoutNode(before, "n1");
  const JoinDecision again = DecideJoin(without, Host("n4", 2, 1), 0);
  CHECK(again.next.quarantined.empty());
  CHECK(StrikesOf(again.next, "n3") == 2);
}

TEST_CASE("A lost host whose seat a spare took is refused when its agent comes back",
          "[rendezvous][quarantine]") {
  Table table = RunningJob();
  table.Step(Host("n1"));
  // n3 (group rank 1) went silent; the survivors name its seat lost.
  table.Step(Host("n2", 1, -1, 1));
  table.Step(Host("n1"));
  table.Step(Host("n4", 1, -1, 1));
  REQUIRE(table.state->complete);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n1", "n4"});
  CHECK(table.state->quarantined == std::vector<std::string>{"n3"});
  // Its link is back and its agent asks for the next round: refused, naming why.
  const JoinDecision back = table.Step(Host("n3", 1));
  CHECK(back.action == JoinAction::kQuarantined);
  CHECK(back.message.find("its agent was lost") != std::string::npos);
}

TEST_CASE("A lost host whose seat nobody took is not set aside", "[rendezvous][quarantine]") {
  Table table;
  for (const char* id : {"n2", "n3", "n4"}) {
    JoinRequest r = Host(id);
    r.min_nodes = 2;
    table.Step(r);
  }
  table.state = CompletedAtLastCall(*table.state, 5000).value_or(*table.state);
  REQUIRE(table.state->complete);
  for (const char* id : {"n2", "n4"}) {
    JoinRequest r = Host(id, 1, -1, 1);
    r.min_nodes = 2;
    table.Step(r);
  }
  table.state = CompletedAtLastCall(*table.state, 5000).value_or(*table.state);
  REQUIRE(table.state->complete);
  CHECK(table.state->seats == std::vector<std::string>{"n2", "n4"});  // closed ranks
  CHECK(table.state->quarantined.empty());
}

TEST_CASE("The quarantine's fields travel in the state's text, and bad ones are refused",
          "[rendezvous][quarantine]") {
  Table table = RunningJob();
  table.Step(Host("n1"));
  table.Rejoin({"n2", "n3", "n4"}, 1, 1);
  table.state->quarantined = {"n7"};
  std::string error;
  const auto decoded = RendezvousState::Decode(table.state->Encode(), &error);
  REQUIRE(decoded);
  CHECK(*decoded == *table.state);
  CHECK(decoded->strikes == std::vector<std::pair<std::string, int>>{{"n3", 1}});

  for (const char* bad : {"n3", "n3*0", "n3*x", "*2", "n4*1,n3*1", "n3*1,n3*2", "n3*-1"}) {
    CAPTURE(bad);
    CHECK_FALSE(DecodeStrikes(bad));
  }
  CHECK(DecodeStrikes("10.0.0.1_7*2,fe80::1_9*1"));  // an id may hold '*'-free colons
  const std::string text = table.state->Encode() + "quarantined=b,a\n";
  CHECK_FALSE(RendezvousState::Decode(text, &error));
}

TEST_CASE("A queued join carries its failed seat, and the admitting host counts it",
          "[rendezvous][quarantine]") {
  QueuedJoin join;
  join.attempt = 4;
  join.request = Host("n4", 2, 1, -1, 3);
  const std::string line = EncodeJoinLine(join);
  std::string error;
  const auto parsed = ParseJoinQueue(line, 0, &error);
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 1);
  CHECK(parsed->front() == join);
  CHECK(parsed->front().request.quarantine_after == 3);

  Table table = RunningJob();
  table.Step(Host("n1"));
  table.Rejoin({"n2", "n3", "n4"}, 1, 1);
  // n4 opens round 2 through the admitting host's batch; n3's queued join is left to decide
  // for itself, and is refused.
  const Admission admission =
      AdmitJoins(table.state, {Host("n4", 2, 1), Host("n3", 2, 1), Host("n1")}, 0);
  CHECK(admission.admitted == std::vector<bool>{true, false, true});
  CHECK(admission.next.quarantined == std::vector<std::string>{"n3"});
  CHECK(admission.next.spares.empty());
  table.state = admission.next;
  CHECK(table.Step(Host("n3", 2, 1)).action == JoinAction::kQuarantined);
}

}  // namespace
}  // namespace cpplaunch
