#include "rendezvous/core/join_queue.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace cpplaunch {
namespace {

JoinRequest Request(const std::string& id, int min_nodes, int max_nodes, int64_t min_round = 0) {
  JoinRequest r;
  r.node_id = id;
  r.min_nodes = min_nodes;
  r.max_nodes = max_nodes;
  r.last_call_timeout = std::chrono::milliseconds(30000);
  r.min_round = min_round;
  return r;
}

TEST_CASE("Join queue lines survive an encode/parse round trip", "[rendezvous][join_queue]") {
  QueuedJoin a{Request("10.0.0.1_42", 2, 4, 3), 7};
  a.request.restart_count = 2;
  QueuedJoin b{Request("[fe80::1%eth0]_43", 1, 1), 1};
  b.request.command_digest = "0123456789abcdef";
  const std::string queue = EncodeJoinLine(a) + EncodeJoinLine(b);
  // A digest follows the lost seat's field, -1 when there is none.
  CHECK(EncodeJoinLine(b) == "[fe80::1%eth0]_43,1,1,1,30000,0,0,-1,0123456789abcdef\n");
  std::string error;
  auto all = ParseJoinQueue(queue, 0, &error);
  REQUIRE(all);
  REQUIRE(all->size() == 2);
  CHECK((*all)[0] == a);
  CHECK((*all)[1] == b);
  auto rest = ParseJoinQueue(queue, 1, &error);
  REQUIRE(rest);
  REQUIRE(rest->size() == 1);
  CHECK(rest->front() == b);
  // A last line without its newline is not complete: left for the next read.
  auto partial = ParseJoinQueue(EncodeJoinLine(a) + "10.0.0.1_44,1,2", 0, &error);
  REQUIRE(partial);
  CHECK(partial->size() == 1);
}

TEST_CASE("Join queue lines that no agent writes are refused", "[rendezvous][join_queue]") {
  std::string error;
  CHECK_FALSE(ParseJoinQueue("id,1,2\n", 0, &error));
  CHECK_THAT(error, Catch::Contains("line 1"));
  CHECK_FALSE(ParseJoinQueue("id,1,3,2,0,0,0\n", 0, &error));  // MAX below MIN
  CHECK_FALSE(ParseJoinQueue("id,1,0,2,0,0,0\n", 0, &error));  // MIN 0
  CHECK_FALSE(ParseJoinQueue(",1,1,1,0,0,0\n", 0, &error));    // no node id
  CHECK_FALSE(ParseJoinQueue("id,x,1,1,0,0,0\n", 0, &error));
}

TEST_CASE("Join answers round trip", "[rendezvous][join_queue]") {
  const JoinAnswer admitted{true, 4, 9, 123456};
  CHECK(ParseJoinAnswer(EncodeJoinAnswer(admitted)) == admitted);
  CHECK(ParseJoinAnswer(EncodeJoinAnswer(JoinAnswer{})) == JoinAnswer{});
  CHECK_FALSE(ParseJoinAnswer("participant 1 2"));
  CHECK_FALSE(ParseJoinAnswer("yes"));
}

TEST_CASE("AdmitJoins applies a batch in one write: MIN arms the last call, MAX completes",
          "[rendezvous][join_queue]") {
  std::vector<JoinRequest> requests;
  for (const char* id : {"d", "b", "a", "c", "e"}) requests.push_back(Request(id, 2, 4));
  const Admission admission = AdmitJoins(std::nullopt, requests, 1000);
  const RendezvousState& s = admission.next;
  CHECK(s.participants == std::vector<std::string>{"a", "b", "c", "d"});  // sorted
  CHECK(s.complete);
  CHECK(s.last_call_deadline_ms == 0);
  CHECK(admission.admitted == std::vector<bool>{true, true, true, true, false});  // e: full
  CHECK(s.version == 1);                                                          // one write
  CHECK(s.epoch == 1);     // one epoch step, though the last call was armed and then completed
  CHECK(s.admitted == 5);  // every line is consumed, admitted or not
}

TEST_CASE("AdmitJoins arms the last call at MIN and keeps the round open below MAX",
          "[rendezvous][join_queue]") {
  RendezvousState current;
  current.version = 7;
  current.epoch = 3;
  current.min_nodes = 2;
  current.max_nodes = 8;
  current.participants = {"b"};
  current.admitted = 1;
  const Admission admission =
      AdmitJoins(current, {Request("a", 2, 8), Request("b", 2, 8), Request("c", 2, 8)}, 5000);
  const RendezvousState& s = admission.next;
  CHECK(s.participants == std::vector<std::string>{"a", "b", "c"});
  CHECK(admission.admitted == std::vector<bool>{true, true, true});  // b: already in
  CHECK_FALSE(s.complete);
  CHECK(s.last_call_deadline_ms == 5000 + 30000);
  CHECK(s.version == 8);
  CHECK(s.epoch == 4);
  CHECK(s.admitted == 4);
}

TEST_CASE("AdmitJoins leaves mismatches, closed jobs and complete rounds to their hosts",
          "[rendezvous][join_queue]") {
  RendezvousState current;
  current.min_nodes = current.max_nodes = 2;
  current.participants = {"a", "b"};
  current.complete = true;
  // Late host: the round is complete (the wait list is DecideJoin's, which announces it).
  Admission late = AdmitJoins(current, {Request("c", 2, 2), Request("d", 1, 3)}, 0);
  CHECK(late.admitted == std::vector<bool>{false, false});
  CHECK(late.next.participants == current.participants);
  CHECK(late.next.wait_list.empty());
  current.complete = false;
  current.participants = {"a"};
  current.closed = true;
  Admission closed = AdmitJoins(current, {Request("c", 2, 2)}, 0);
  CHECK(closed.admitted == std::vector<bool>{false});
  // Another job's command (the same --rdzv-id): left for DecideJoin to refuse.
  current.closed = false;
  current.min_nodes = 1;
  current.command_digest = "0123456789abcdef";
  JoinRequest stranger = Request("e", 1, 2);
  stranger.command_digest = "fedcba9876543210";
  JoinRequest fellow = Request("f", 1, 2);
  fellow.command_digest = "0123456789abcdef";
  Admission mixed = AdmitJoins(current, {stranger, fellow}, 0);
  CHECK(mixed.admitted == std::vector<bool>{false, true});
}

TEST_CASE("AdmitJoins lets a restarted host open the next round, and the rest join it",
          "[rendezvous][join_queue]") {
  RendezvousState current;
  current.round = 0;
  current.min_nodes = current.max_nodes = 2;
  current.participants = {"a", "b"};
  current.complete = true;
  current.epoch = 5;
  current.admitted = 2;
  // "x" (a straggler for round 0) is refused, then "b" restarts into round 1 and "a" follows.
  Admission admission =
      AdmitJoins(current, {Request("x", 2, 2), Request("b", 2, 2, 1), Request("a", 2, 2, 1)}, 0);
  const RendezvousState& s = admission.next;
  CHECK(s.round == 1);
  CHECK(s.participants == std::vector<std::string>{"a", "b"});
  CHECK(s.complete);
  CHECK(admission.admitted == std::vector<bool>{false, true, true});
  CHECK(s.epoch == 6);
  CHECK(s.admitted == 5);
}

}  // namespace
}  // namespace cpplaunch
