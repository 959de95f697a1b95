#include "rendezvous/node_info.h"

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
