#include "rendezvous/core/join_steps.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

RendezvousState OpenRound(std::vector<std::string> participants, int min_nodes, int max_nodes) {
  RendezvousState state;
  state.version = 3;
  state.round = 2;
  state.min_nodes = min_nodes;
  state.max_nodes = max_nodes;
  state.participants = std::move(participants);
  return state;
}

NodeInfo Self() {
  NodeInfo self;
  self.node_id = "10.0.0.2_7";
  self.hostname = "host-b";
  self.addr = "10.0.0.2";
  return self;
}

TEST_CASE("JoinRequestFor: a failure consumes a restart, a membership change does not",
          "[rendezvous][join_steps]") {
  RendezvousSettings settings;
  settings.self.node_id = "a";
  settings.min_nodes = 2;
  settings.max_nodes = 4;
  settings.last_call_timeout = 7s;
  const JoinRequest first = JoinRequestFor(settings, std::nullopt);
  CHECK(first.node_id == "a");
  CHECK(first.min_nodes == 2);
  CHECK(first.max_nodes == 4);
  CHECK(first.last_call_timeout == 7s);
  CHECK(first.min_round == 0);
  CHECK(first.restart_count == 0);
  const JoinRequest after_failure = JoinRequestFor(settings, RoundTransition{3, 1, true});
  CHECK(after_failure.min_round == 4);
  CHECK(after_failure.restart_count == 2);
  const JoinRequest after_change = JoinRequestFor(settings, RoundTransition{3, 1, false});
  CHECK(after_change.min_round == 4);
  CHECK(after_change.restart_count == 1);
}

TEST_CASE("WakeTime is the earliest of the deadline, the next progress line and the wake-up",
          "[rendezvous][join_steps]") {
  const Clock::time_point now{100s};
  const int64_t now_ms = 5'000;
  CHECK(WakeTime(now + 10s, now + 5s, 0, now, now_ms) == now + 5s);  // no wake-up
  CHECK(WakeTime(now + 3s, now + 5s, 0, now, now_ms) == now + 3s);
  CHECK(WakeTime(now + 10s, now + 5s, now_ms + 2'000, now, now_ms) == now + 2s);
  CHECK(WakeTime(now + 1s, now + 5s, now_ms + 2'000, now, now_ms) == now + 1s);
}

TEST_CASE("CompletesOpenRound: only a write that completes an open round checks its members",
          "[rendezvous][join_steps]") {
  RendezvousState open = OpenRound({"a", "b"}, 2, 3);
  RendezvousState complete = open;
  complete.complete = true;
  CHECK(CompletesOpenRound(open, complete));
  CHECK_FALSE(CompletesOpenRound(open, open));
  CHECK_FALSE(CompletesOpenRound(complete, complete));
  CHECK_FALSE(CompletesOpenRound(std::nullopt, complete));
}

TEST_CASE("A waiting host's notice and line name the running round", "[rendezvous][join_steps]") {
  RendezvousState running = OpenRound({"a", "b"}, 1, 3);
  running.complete = true;
  const RoundEnd notice = MembershipChangeNotice(Self(), running);
  CHECK(notice.kind == RoundEndKind::kMembershipChange);
  CHECK(notice.host == "host-b");
  CHECK(notice.addr == "10.0.0.2");
  CHECK(notice.detail == "round 2 has 2 of at most 3 hosts");
  CHECK(RestartAskedLine("job", running) ==
        "job 'job' is running with 2 host(s); asked it to restart so that this host can join");
  CHECK(LeftBeforeCompletionLine("c", 2, "its etcd lease expired") ==
        "host c left round 2 before it completed (its etcd lease expired)");
}

TEST_CASE("RefusalOf closes the job, and tells a running round with a config error",
          "[rendezvous][join_steps]") {
  JoinDecision decision;
  decision.action = JoinAction::kMismatch;
  decision.message = "--nnodes=3 but the job's rendezvous uses --nnodes=2";
  decision.next = OpenRound({"a"}, 2, 2);
  const Refusal open = RefusalOf(Self(), decision);
  CHECK(open.message == "host-b at 10.0.0.2: --nnodes=3 but the job's rendezvous uses --nnodes=2");
  CHECK(open.closed == Closed(decision.next, open.message));
  CHECK_FALSE(open.notice);
  decision.next.complete = true;
  const Refusal running = RefusalOf(Self(), decision);
  REQUIRE(running.notice);
  CHECK(running.notice->kind == RoundEndKind::kConfigError);
  CHECK(running.notice->host == "host-b");
  CHECK(running.notice->addr == "10.0.0.2");
  CHECK(running.notice->detail == running.message);
}

TEST_CASE("LeavingState gives up a waiting place or one in an open round, nothing else",
          "[rendezvous][join_steps]") {
  const RendezvousState open = OpenRound({"a", "b"}, 2, 3);
  const auto left = LeavingState(open, "a");
  REQUIRE(left);
  CHECK(*left == WithoutNode(open, "a"));
  CHECK_FALSE(LeavingState(open, "z"));
  RendezvousState running = open;
  running.complete = true;
  CHECK_FALSE(LeavingState(running, "a"));  // a member of a running round stays one
  running.wait_list = {"w"};
  const auto waiter_left = LeavingState(running, "w");
  REQUIRE(waiter_left);
  CHECK(waiter_left->wait_list.empty());
}

TEST_CASE("JoinTimeoutDetail says how far the join got", "[rendezvous][join_steps]") {
  CHECK(JoinTimeoutDetail(OpenRound({"a"}, 2, 3), 600s, 2, 3) ==
        "after 600 s (join_timeout): 1 host(s) had joined round 2, --nnodes=2:3");
  CHECK(JoinTimeoutDetail(std::nullopt, 1500ms, 2, 2) ==
        "after 1.5 s (join_timeout): no host had joined, --nnodes=2");
}

TEST_CASE("ProgressLine is the waiting line of this node", "[rendezvous][join_steps]") {
  RendezvousSettings settings;
  settings.run_id = "job";
  settings.self.node_id = "a";
  const RendezvousState open = OpenRound({"a"}, 2, 3);
  CHECK(ProgressLine(open, settings, "the store 10.0.0.1:29400", 590s, 0) ==
        "waiting for hosts of job 'job' (round 2, --nnodes=2:3) at the store 10.0.0.1:29400: 1 "
        "joined [a]; need 1 more to start; join timeout in 590 s");
}

TEST_CASE("JoinStepLine names the action, the round and who is in it", "[rendezvous][join_steps]") {
  JoinDecision decision;
  decision.action = JoinAction::kWrite;
  decision.next = OpenRound({"a", "b", "c"}, 2, 4);
  decision.next.epoch = 5;
  decision.next.wait_list = {"d"};
  decision.next.last_call_deadline_ms = 1;
  CHECK(JoinStepLine(decision) ==
        "join step: write round 2 epoch 5 (3 participants, 1 waiting, last call armed)");
  decision.action = JoinAction::kDone;
  decision.next.complete = true;
  decision.rank = 1;
  CHECK(JoinStepLine(decision) ==
        "join step: done round 2 epoch 5 (3 participants, 1 waiting, complete): group rank 1");
  decision.action = JoinAction::kClosed;
  decision.message = "the job ended";
  CHECK(JoinStepLine(decision).ends_with("complete): the job ended"));
}

TEST_CASE("AdmissionLine and JoinAnswerLine trace the queued join", "[rendezvous][join_steps]") {
  Admission admission{OpenRound({"a", "b"}, 2, 4), {true, false}};
  admission.next.epoch = 1;
  CHECK(AdmissionLine(admission) ==
        "join queue: admitted 1 of 2 into round 2 epoch 1 (2 participants, 0 waiting)");
  CHECK(JoinAnswerLine(std::nullopt) == "join queue: no answer in time; deciding from the state");
  CHECK(JoinAnswerLine(JoinAnswer{false, 2, 1, 0}) ==
        "join queue: not admitted; deciding from the state");
  CHECK(JoinAnswerLine(JoinAnswer{true, 2, 1, 0}) ==
        "join queue: admitted to round 2, waiting for epoch 2");
}

}  // namespace
}  // namespace cpplaunch
