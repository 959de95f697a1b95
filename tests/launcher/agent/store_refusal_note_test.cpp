// Issue 23 item 7: with mismatched secrets the store's host ends naming the refusals.

#include "launcher/agent/store_refusal_note.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("RefusedHandshakesNote names the refusals and the last peer", "[agent][store_host]") {
  StoreCounters counters;
  CHECK_FALSE(RefusedHandshakesNote(counters));
  counters.refused = 7;  // other refusals are not handshakes
  CHECK_FALSE(RefusedHandshakesNote(counters));
  counters.refused_handshakes = 1;
  counters.last_refused_peer = "10.0.0.2";
  CHECK(RefusedHandshakesNote(counters) ==
        "this host's store refused 1 agent handshake (the last from 10.0.0.2): those hosts "
        "have another secret_file, or none; every host of the job needs the same secret "
        "(docs/security.md)");
  counters.refused_handshakes = 3;
  CHECK_THAT(*RefusedHandshakesNote(counters), Catch::StartsWith("this host's store refused 3 "
                                                                 "agent handshakes"));
}

}  // namespace
}  // namespace cpplaunch
