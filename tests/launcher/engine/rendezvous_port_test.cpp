#include "launcher/engine/rendezvous_port.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("derived ports follow the documented formula, below the ephemeral range") {
  CHECK(DerivedPort(1234, 0) == 20000 + 234 * 12);
  CHECK(DerivedPort(1234, 1) == 20000 + 234 * 12 + 1);
  CHECK(DerivedPort(0, 0) == kDerivedPortBase);
  CHECK(DerivedPort(999, 11) == kDerivedPortEnd - 1);
  for (uint64_t job : {0ULL, 1ULL, 999ULL, 1000ULL, 123456789ULL, ~0ULL}) {
    for (uint64_t step : {0ULL, 5ULL, 11ULL, 12ULL, 4294967294ULL}) {
      const int port = DerivedPort(job, step);
      CHECK(port >= kDerivedPortBase);
      CHECK(port < 32768);  // Linux's ephemeral range starts here
    }
  }
  // Neighbouring jobs on one node, and the steps of one job, get different ports.
  CHECK(DerivedPort(1234, 0) != DerivedPort(1235, 0));
  CHECK(DerivedPort(1234, 0) != DerivedPort(1234, 1));
}

TEST_CASE("job numbers: digits as a number, anything else hashed") {
  CHECK(JobNumber("1234") == 1234);
  CHECK(JobNumber("0") == 0);
  CHECK(JobNumber("prterun-vm-123@1") == JobNumber("prterun-vm-123@1"));
  CHECK(JobNumber("prterun-vm-123@1") != JobNumber("prterun-vm-124@1"));
}

}  // namespace
}  // namespace cpplaunch
