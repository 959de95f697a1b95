#include "launcher/multihost/host_info.h"

#include <unistd.h>

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("IsLocalAddress: loopback is this host's, a documentation address is not") {
  CHECK(IsLocalAddress("127.0.0.1"));
  CHECK_FALSE(IsLocalAddress("192.0.2.1"));  // TEST-NET-1: never assigned to a host
}

TEST_CASE("ThisAgentNodeIdParts: this process's pid and a fresh random part") {
  const NodeIdParts first = ThisAgentNodeIdParts();
  CHECK(first.pid == static_cast<int>(::getpid()));
  // Two draws of 32 random bits agree once in 2^32 runs; eight tries make a stuck source plain.
  bool differs = false;
  for (int i = 0; i < 8 && !differs; ++i) differs = ThisAgentNodeIdParts().random != first.random;
  CHECK(differs);
}

}  // namespace
}  // namespace cpplaunch
