#include "rendezvous/core/node_info.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

TEST_CASE("NodeInfo survives an encode/decode round trip", "[rendezvous][node_info]") {
  NodeInfo info;
  info.node_id = "10.0.0.2_4242";
  info.addr = "10.0.0.2";
  info.hostname = "host-b";
  info.local_world_size = 4;
  info.nnodes_min = 1;
  info.nnodes_max = 3;
  info.max_restarts = 2;
  std::string error;
  auto decoded = NodeInfo::Decode(info.Encode(), &error);
  REQUIRE(decoded);
  CHECK(*decoded == info);
}

TEST_CASE("NodeInfo carries the rank-0 worker store port; older agents send none",
          "[rendezvous][node_info]") {
  NodeInfo info;
  info.node_id = "_1";
  info.local_world_size = 1;  // a valid record otherwise (record_limits)
  info.nnodes_min = 1;
  info.nnodes_max = 1;
  info.worker_store_port = 40123;
  std::string error;
  auto decoded = NodeInfo::Decode(info.Encode(), &error);
  REQUIRE(decoded);
  CHECK(decoded->worker_store_port == 40123);
  info.worker_store_port = 0;
  CHECK(info.Encode().find("worker_store_port") == std::string::npos);
  const std::string older =
      "node_id=a\nlocal_world_size=1\nnnodes_min=1\nnnodes_max=1\n"
      "max_restarts=0\n";
  decoded = NodeInfo::Decode(older, &error);
  REQUIRE(decoded);
  CHECK(decoded->worker_store_port == 0);
  CHECK_FALSE(NodeInfo::Decode(older + "worker_store_port=x\n", &error));
  CHECK(error.find("worker_store_port") != std::string::npos);
}

TEST_CASE("NodeInfo carries the status endpoint when it serves one", "[rendezvous][node_info]") {
  NodeInfo info;
  info.node_id = "_1";
  info.local_world_size = 1;
  info.nnodes_min = 1;
  info.nnodes_max = 1;
  CHECK(info.Encode().find("status") == std::string::npos);
  info.status = "[fd00::1]:8931";
  std::string error;
  auto decoded = NodeInfo::Decode(info.Encode(), &error);
  REQUIRE(decoded);
  CHECK(decoded->status == "[fd00::1]:8931");
  info.status.assign(300, 'a');
  CHECK_FALSE(NodeInfo::Decode(info.Encode(), &error));
  CHECK(error.find("status") != std::string::npos);
}

TEST_CASE("NnodesText writes --nnodes as N or MIN:MAX", "[rendezvous][node_info]") {
  CHECK(NnodesText(2, 2) == "2");
  CHECK(NnodesText(1, 4) == "1:4");
  CHECK(NnodesText(0, 0) == "0");
}

TEST_CASE("NodeInfo decoding needs a node_id and integer fields", "[rendezvous][node_info]") {
  std::string error;
  CHECK_FALSE(NodeInfo::Decode("addr=x\n", &error));
  CHECK(error == "node info without a node_id");
  CHECK_FALSE(NodeInfo::Decode("node_id=a\nlocal_world_size=four\n", &error));
  CHECK(error.find("local_world_size") != std::string::npos);
}

TEST_CASE("NodeInfo::Label names the host and its address once", "[rendezvous][node_info]") {
  NodeInfo info;
  info.addr = "10.0.0.2";
  CHECK(info.Label() == "10.0.0.2");
  info.hostname = "host-b";
  CHECK(info.Label() == "host-b at 10.0.0.2");
  info.addr = "host-b";
  CHECK(info.Label() == "host-b");
}

TEST_CASE("RoundEnd survives an encode/decode round trip, kind included",
          "[rendezvous][node_info]") {
  RoundEnd end;
  end.kind = RoundEndKind::kPeerLost;
  end.host = "host-b";
  end.addr = "10.0.0.2";
  end.node_rank = 1;
  end.detail = "no heartbeat\nfor 30 s";
  std::string error;
  auto decoded = RoundEnd::Decode(end.Encode(), &error);
  REQUIRE(decoded);
  end.detail = "no heartbeat for 30 s";  // one line in the record
  CHECK(*decoded == end);
  CHECK_FALSE(RoundEnd::Decode("kind=meteor\n", &error));
  CHECK(error == "round-end notice of unknown kind 'meteor'");
}

NodeInfo ValidNode() {
  NodeInfo info;
  info.node_id = "10.0.0.2_4242";
  info.addr = "10.0.0.2";
  info.hostname = "host-b";
  info.local_world_size = 4;
  info.nnodes_min = 1;
  info.nnodes_max = 3;
  info.max_restarts = 2;
  return info;
}

// Decodes `info` after `change`, returning the error ("" when it decoded).
template <typename Change>
std::string NodeError(Change change) {
  NodeInfo info = ValidNode();
  change(info);
  std::string error;
  return NodeInfo::Decode(info.Encode(), &error) ? std::string() : error;
}

TEST_CASE("NodeInfo decoding refuses values outside the record limits", "[rendezvous][node_info]") {
  CHECK(NodeError([](NodeInfo&) {}).empty());
  // The repro of the overflow: a fake node claiming INT32_MAX workers.
  CHECK(NodeError([](NodeInfo& n) { n.local_world_size = 2147483647; }) ==
        "store value field 'local_world_size' is 2147483647, outside 1..1048576");
  CHECK(NodeError([](NodeInfo& n) { n.local_world_size = 0; }) ==
        "store value field 'local_world_size' is 0, outside 1..1048576");
  CHECK(NodeError([](NodeInfo& n) { n.local_world_size = 1 << 20; }).empty());
  CHECK(NodeError([](NodeInfo& n) { n.local_world_size = -5; }).find("outside") !=
        std::string::npos);
  CHECK(NodeError([](NodeInfo& n) { n.nnodes_min = 0; }) ==
        "store value field 'nnodes_min' is 0, outside 1..1048576");
  CHECK(NodeError([](NodeInfo& n) { n.nnodes_max = 0; }) ==
        "store value field 'nnodes_max' is 0, outside 1..1048576");
  CHECK(NodeError([](NodeInfo& n) { n.nnodes_max = (1 << 20) + 1; }).find("nnodes_max") !=
        std::string::npos);
  CHECK(NodeError([](NodeInfo& n) { n.max_restarts = -1; }) ==
        "store value field 'max_restarts' is -1, outside 0..2147483647");
  CHECK(NodeError([](NodeInfo& n) { n.node_id = std::string(513, 'x'); }) ==
        "store value field 'node_id' is 513 bytes long, more than 512");
  CHECK(NodeError([](NodeInfo& n) { n.node_id = "a,b"; }) == "node info with a ',' in its node_id");
  CHECK(NodeError([](NodeInfo& n) { n.addr = std::string(257, '1'); }).find("'addr'") !=
        std::string::npos);
  CHECK(NodeError([](NodeInfo& n) { n.hostname = std::string(1025, 'h'); }).find("'hostname'") !=
        std::string::npos);
}

TEST_CASE("RoundEnd decoding refuses values outside the record limits; Encode cuts the detail",
          "[rendezvous][node_info]") {
  RoundEnd end;
  end.host = "host-b";
  end.node_rank = 1;
  end.rank = 3;
  end.local_rank = 1;
  std::string error;
  auto decode = [&](const RoundEnd& changed) { return RoundEnd::Decode(changed.Encode(), &error); };
  CHECK(decode(end));
  RoundEnd bad = end;
  bad.rank = -2;
  CHECK_FALSE(decode(bad));
  CHECK(error == "store value field 'rank' is -2, outside -1..2147483646");
  bad = end;
  bad.node_rank = 1 << 20;
  CHECK_FALSE(decode(bad));
  CHECK(error.find("'node_rank'") != std::string::npos);
  bad = end;
  bad.local_rank = -7;
  CHECK_FALSE(decode(bad));
  CHECK(error.find("'local_rank'") != std::string::npos);
  bad = end;
  bad.host = std::string(1025, 'h');
  CHECK_FALSE(decode(bad));
  CHECK(error.find("'host'") != std::string::npos);
  // An overlong detail written by hand is refused; one written by Encode is cut to fit.
  CHECK_FALSE(RoundEnd::Decode("kind=peer_lost\nnode_rank=1\nrank=-1\nlocal_rank=-1\ndetail=" +
                                   std::string(16385, 'd') + "\n",
                               &error));
  CHECK(error == "store value field 'detail' is 16385 bytes long, more than 16384");
  bad = end;
  bad.detail = std::string(20000, 'd');
  auto cut = decode(bad);
  REQUIRE(cut);
  CHECK(cut->detail == std::string(16384, 'd'));
}

TEST_CASE("RoundEnd::Describe is one line naming the place", "[rendezvous][node_info]") {
  RoundEnd end;
  end.host = "host-b";
  end.addr = "10.0.0.2";
  end.node_rank = 1;
  end.rank = 3;
  end.local_rank = 1;
  end.detail = "exitcode 1";
  CHECK(end.Describe() ==
        "worker rank 3 (local rank 1) on host-b (10.0.0.2, node rank 1) failed: exitcode 1");
  end.kind = RoundEndKind::kMembershipChange;
  CHECK_FALSE(end.counts_as_failure());
  end.host.clear();
  end.kind = RoundEndKind::kAgentStopped;
  end.detail = "SIGTERM";
  CHECK(end.Describe() == "the agent on 10.0.0.2 (node rank 1) stopped: SIGTERM");
}

}  // namespace
}  // namespace cpplaunch
