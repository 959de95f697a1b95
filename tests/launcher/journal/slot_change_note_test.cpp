#include "launcher/journal/slot_change_note.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "launcher/journal/slot_changes.h"

namespace cpplaunch {
namespace {

RoundPeer Peer(int group_rank, const std::string& name) {
  RoundPeer peer;
  peer.group_rank = group_rank;
  peer.node.node_id = "10.0.0." + name + "_1_00000000";
  peer.node.hostname = "vm-" + name;
  peer.node.addr = "10.0.0." + name;
  return peer;
}

TEST_CASE("CompareRounds: the slots taken, what each replaced, and the hosts moved",
          "[slot_change]") {
  const std::vector<RoundPeer> before{Peer(0, "1"), Peer(1, "2"), Peer(2, "3")};
  const SlotChanges spare = CompareRounds(before, 3, {Peer(0, "1"), Peer(1, "5"), Peer(2, "3")}, 3,
                                          {"10.0.0.2_1_00000000"});
  REQUIRE(spare.taken.size() == 1);
  CHECK(spare.taken[0].group_rank == 1);
  CHECK(spare.taken[0].host == "vm-5 at 10.0.0.5");
  CHECK(spare.taken[0].replaced == "vm-2 at 10.0.0.2");
  CHECK(spare.taken[0].replaced_set_aside);
  CHECK(spare.moved == 0);
  const SlotChanges compacted = CompareRounds(before, 3, {Peer(0, "1"), Peer(1, "3")}, 2);
  CHECK(compacted.taken.empty());
  CHECK(compacted.moved == 1);
}

TEST_CASE("SlotChangeLines: a spare in a lost host's slot is named with it", "[slot_change]") {
  const std::vector<RoundPeer> before{Peer(0, "1"), Peer(1, "2"), Peer(2, "3")};
  const std::vector<RoundPeer> after{Peer(0, "1"), Peer(1, "5"), Peer(2, "3")};
  CHECK(SlotChangeLines(before, 3, after, 3, 2) ==
        std::vector<std::string>{
            "round 2: vm-5 at 10.0.0.5 took group rank 1, the slot of vm-2 at 10.0.0.2"});
}

TEST_CASE("SlotChangeLines: a host set aside is said to be, and the job's end names it",
          "[slot_change]") {
  const std::vector<RoundPeer> before{Peer(0, "1"), Peer(1, "2"), Peer(2, "3")};
  const std::vector<RoundPeer> after{Peer(0, "1"), Peer(1, "5"), Peer(2, "3")};
  const std::vector<std::string> set_aside{before[1].node.node_id};
  CHECK(SlotChangeLines(before, 3, after, 3, 2, set_aside) ==
        std::vector<std::string>{"round 2: vm-5 at 10.0.0.5 took group rank 1, the slot of vm-2 "
                                 "at 10.0.0.2, which is set aside for the rest of the job"});
  const std::map<std::string, std::string> labels{{before[1].node.node_id, "vm-2 at 10.0.0.2"}};
  CHECK(SetAsideSummary(set_aside, labels) ==
        "hosts set aside during the job (a spare took each one's place): vm-2 at 10.0.0.2");
  CHECK(SetAsideSummary({"10.0.0.9_4_00000000"}, labels).ends_with(": 10.0.0.9_4_00000000"));
  CHECK(SetAsideSummary({}, labels).empty());
}

TEST_CASE("SlotChangeLines: a compacted round says the survivors' ranks moved", "[slot_change]") {
  const std::vector<RoundPeer> before{Peer(0, "1"), Peer(1, "2"), Peer(2, "3")};
  const std::vector<RoundPeer> after{Peer(0, "1"), Peer(1, "3")};
  CHECK(SlotChangeLines(before, 3, after, 2, 1) ==
        std::vector<std::string>{
            "round 1: 1 of the last round's hosts changed group rank: their workers' RANKs moved"});
}

TEST_CASE("SlotChangeLines: a grown round names the new host", "[slot_change]") {
  const std::vector<RoundPeer> before{Peer(0, "1"), Peer(1, "2")};
  const std::vector<RoundPeer> after{Peer(0, "1"), Peer(1, "2"), Peer(2, "4")};
  CHECK(SlotChangeLines(before, 2, after, 3, 1) ==
        std::vector<std::string>{"round 1: vm-4 at 10.0.0.4 took group rank 2, a new slot"});
}

TEST_CASE("SlotChangeLines: nothing for the same hosts or a first round", "[slot_change]") {
  const std::vector<RoundPeer> hosts{Peer(0, "1"), Peer(1, "2")};
  CHECK(SlotChangeLines(hosts, 2, hosts, 2, 1).empty());
  CHECK(SlotChangeLines({}, 0, hosts, 2, 0).empty());
}

TEST_CASE("SlotChangeLines: partial lists name a known rank's new holder, same size only",
          "[slot_change]") {
  // A large dynamic job lists itself, group rank 0 and its peers only.
  const std::vector<RoundPeer> partial{Peer(0, "1"), Peer(5, "9"), Peer(6, "6")};
  CHECK(SlotChangeLines(partial, 64, {Peer(0, "1"), Peer(5, "7"), Peer(6, "6")}, 64, 3) ==
        std::vector<std::string>{
            "round 3: vm-7 at 10.0.0.7 took group rank 5, the slot of vm-9 at 10.0.0.9"});
  // A rank not listed before says nothing; nor does a round of another size (ranks compacted).
  CHECK(SlotChangeLines(partial, 64, {Peer(0, "1"), Peer(7, "8")}, 64, 3).empty());
  CHECK(SlotChangeLines(partial, 64, {Peer(0, "1"), Peer(5, "7")}, 63, 3).empty());
}

}  // namespace
}  // namespace cpplaunch
