// Issue 23 item 7: with mismatched secrets the store's host ends naming the refusals.

#include "launcher/agent/store_refusal_note.h"

#include <catch2/catch.hpp>
#include <string>

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

// Issue 23 item 3: a store kept full refused the next restart's agent write; the job ended
// blaming a healthy host, the refusal hidden among 168 others. The run's end names it once.
TEST_CASE("BudgetRefusalsNote names the agent's refusal over the others",
          "[agent][store_host][budget]") {
  StoreCounters counters;
  counters.refused = 3;  // other limits, and connections not accepted
  CHECK_FALSE(BudgetRefusalsNote(counters));
  counters.budget_refusals = 168;
  counters.budget_refusal =
      "SET from 10.0.0.9:5000: storing 9 B at key 't9' would exceed the store's memory budget "
      "of 1.0 GiB (960.0 MiB stored, 0 B held for requests, 0 B queued output)";
  CHECK(BudgetRefusalsNote(counters) ==
        "this host's store refused 168 requests over its memory budget (the first: SET from "
        "10.0.0.9:5000: storing 9 B at key 't9' would exceed the store's memory budget of 1.0 "
        "GiB (960.0 MiB stored, 0 B held for requests, 0 B queued output)); raise "
        "store_max_bytes in --rdzv-conf, or find what fills the store (docs/store_protocol.md)");
  counters.budget_refusals = 169;
  counters.agent_budget_refusals = 1;
  counters.budget_refusal = "SET from the agent at 10.0.0.2:40000: storing 512.0 KiB ...";
  const std::string note = *BudgetRefusalsNote(counters);
  CHECK_THAT(note, Catch::StartsWith("this host's store refused 169 requests over its memory "
                                     "budget, 1 of them from an agent (the last: SET from the "
                                     "agent at 10.0.0.2:40000: storing 512.0 KiB ...); the "
                                     "store closes the connection of an agent it refuses, so a "
                                     "host reported lost may be healthy; raise store_max_bytes"));
  counters.budget_refusals = 1;
  CHECK_THAT(*BudgetRefusalsNote(counters), Catch::StartsWith("this host's store refused 1 "
                                                              "request over"));
}

}  // namespace
}  // namespace cpplaunch
