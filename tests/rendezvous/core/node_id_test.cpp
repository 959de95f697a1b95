#include "rendezvous/core/node_id.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

TEST_CASE("A node id is the address, the pid and eight hex digits of random",
          "[rendezvous][node_id]") {
  CHECK(NodeIdSuffix({1, 0x9f3a61c2}) == "_1_9f3a61c2");
  CHECK(NodeIdSuffix({4242, 0}) == "_4242_00000000");
  CHECK(NodeIdSuffix({4242, 0xffffffff}) == "_4242_ffffffff");
  CHECK(WithAddress(NodeIdSuffix({1, 0x9f3a61c2}), "10.0.0.2") == "10.0.0.2_1_9f3a61c2");
  CHECK(WithAddress("", "10.0.0.2") == "10.0.0.2");
  // A complete id (a test's, or one completed before a reconnect) stays as it is.
  CHECK(WithAddress("10.0.0.2_1_9f3a61c2", "10.0.0.3") == "10.0.0.2_1_9f3a61c2");
}

TEST_CASE("Two agents behind one address with one pid get different node ids",
          "[rendezvous][node_id]") {
  // The repro: containers with host networking, each running cpplaunch as PID 1. Their
  // ids were both "10.0.0.2_1".
  const std::string a = WithAddress(NodeIdSuffix({1, 0x0badf00d}), "10.0.0.2");
  const std::string b = WithAddress(NodeIdSuffix({1, 0x5eed1e55}), "10.0.0.2");
  CHECK(a != b);
  CHECK(a.starts_with("10.0.0.2_1_"));
  CHECK(b.starts_with("10.0.0.2_1_"));
}

TEST_CASE("A node id clash is one line naming the id and what to do", "[rendezvous][node_id]") {
  const std::string line = NodeIdClashMessage("job7", "10.0.0.2_1_9f3a61c2", "host-b at 10.0.0.2");
  CHECK(line ==
        "rendezvous failed on host-b at 10.0.0.2: another agent of job 'job7' already joined as "
        "node 10.0.0.2_1_9f3a61c2 (same address, process id and random part: a copy of this "
        "agent?); start this agent again to draw a new node id");
  CHECK(line.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
