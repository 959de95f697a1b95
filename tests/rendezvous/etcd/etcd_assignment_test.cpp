#include "rendezvous/etcd/etcd_assignment.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

RendezvousState CompleteState(int size) {
  RendezvousState state;
  state.round = 4;
  state.min_nodes = state.max_nodes = size;
  state.complete = true;
  for (int i = 0; i < size; ++i)
    state.participants.push_back("10.0.0.1_" + std::to_string(100 + i));
  return state;
}

// Every participant's record, multi-line as NodeInfo writes them, one with '@' and '=' inside.
std::map<std::string, std::string> Records(const RendezvousState& state) {
  std::map<std::string, std::string> records;
  for (const auto& id : state.participants) {
    records[id] = "node_id=" + id + "\nhostname=h@records 1 2\naddr=10.0.0.1\n";
  }
  return records;
}

TEST_CASE("etcd assignment: carries the peers' records, only theirs, and their revision") {
  const RendezvousState state = CompleteState(20);
  const auto records = Records(state);
  const RoundAssignment a = AssignRound(state, std::vector<int>(20, 2))[5];
  const std::string value = EncodePublishedAssignment(a, 77, records);
  std::string error;
  const auto back = DecodePublishedAssignment(value, &error);
  INFO(error);
  REQUIRE(back);
  CHECK(back->assignment == a);
  CHECK(back->records_revision == 77);
  REQUIRE(back->records.size() == a.peers.size());
  CHECK(a.peers.size() < state.participants.size());
  for (const auto& [rank, id] : a.peers) CHECK(back->records.at(id) == records.at(id));
}

TEST_CASE("etcd assignment: a peer without a record is carried as absent") {
  const RendezvousState state = CompleteState(3);
  auto records = Records(state);
  records.erase(state.participants[1]);
  const RoundAssignment a = AssignRound(state, {1, 1, 1})[0];
  std::string error;
  const auto back = DecodePublishedAssignment(EncodePublishedAssignment(a, 9, records), &error);
  REQUIRE(back);
  CHECK(back->records.size() == 2);
  CHECK_FALSE(back->records.count(state.participants[1]));
}

TEST_CASE("etcd assignment: a bare assignment carries no records (revision 0)") {
  const RoundAssignment a = AssignRound(CompleteState(2), {1, 1})[1];
  std::string error;
  const auto back = DecodePublishedAssignment(a.Encode(), &error);
  REQUIRE(back);
  CHECK(back->assignment == a);
  CHECK(back->records_revision == 0);
  CHECK(back->records.empty());
}

TEST_CASE("etcd assignment: a malformed value is one line naming what is wrong") {
  const RendezvousState state = CompleteState(2);
  const RoundAssignment a = AssignRound(state, {1, 1})[0];
  const std::string good = EncodePublishedAssignment(a, 5, Records(state));
  std::string error;
  CHECK_FALSE(DecodePublishedAssignment(a.Encode() + "@records x 1\n", &error));
  CHECK(error == "round assignment: malformed records header");
  CHECK_FALSE(DecodePublishedAssignment(good.substr(0, good.size() - 3), &error));
  CHECK(error.find("cut short") != std::string::npos);
  CHECK_FALSE(DecodePublishedAssignment(good + "extra", &error));
  CHECK(error == "round assignment: 5 bytes after the records");
  CHECK_FALSE(DecodePublishedAssignment(a.Encode() + "@records 5 1\nnolength\n", &error));
  CHECK(error == "round assignment: malformed record 1");
  CHECK_FALSE(DecodePublishedAssignment("@records 5 0\n", &error));  // no assignment fields
  CHECK(error.find("round assignment") == 0);
}

}  // namespace
}  // namespace cpplaunch
