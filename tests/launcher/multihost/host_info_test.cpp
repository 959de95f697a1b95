#include "launcher/multihost/host_info.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("IsLocalAddress: loopback is this host's, a documentation address is not") {
  CHECK(IsLocalAddress("127.0.0.1"));
  CHECK_FALSE(IsLocalAddress("192.0.2.1"));  // TEST-NET-1: never assigned to a host
}

}  // namespace
}  // namespace cpplaunch
