// What counts as progress for --hang-timeout.

#include "launcher/hang/progress_rule.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

ProgressSample Sample(std::uint64_t lines, std::map<int, std::uint64_t> ticks) {
  return ProgressSample{lines, std::move(ticks)};
}

TEST_CASE("Progressed: any output line is progress", "[agent][progress_rule]") {
  CHECK(Progressed(Sample(3, {{0, 10}}), Sample(4, {{0, 10}}), milliseconds(1000), 100));
}

TEST_CASE("Progressed: every worker must use CPU", "[agent][progress_rule]") {
  // Over 1 s at 100 ticks/s, 2% of a CPU is 2 ticks.
  CHECK(Progressed(Sample(0, {{0, 10}, {1, 10}}), Sample(0, {{0, 12}, {1, 90}}), milliseconds(1000),
                   100));
  // Ranks 0-2 spin in a collective (as NCCL's waiting ranks do); rank 3 is blocked: a hang.
  CHECK_FALSE(Progressed(Sample(0, {{0, 0}, {1, 0}, {2, 0}, {3, 50}}),
                         Sample(0, {{0, 100}, {1, 100}, {2, 100}, {3, 50}}), milliseconds(1000),
                         100));
  // Everyone blocked (gloo's waiting ranks sleep).
  CHECK_FALSE(Progressed(Sample(0, {{0, 5}, {1, 5}}), Sample(0, {{0, 5}, {1, 6}}),
                         milliseconds(1000), 100));
}

TEST_CASE("Progressed: workers in only one sample are left out", "[agent][progress_rule]") {
  // Rank 1 exited (success) between samples; rank 0 works on.
  CHECK(Progressed(Sample(0, {{0, 0}, {1, 0}}), Sample(0, {{0, 50}}), milliseconds(1000), 100));
  // No worker in both samples and no output: nothing says progress.
  CHECK_FALSE(Progressed(Sample(0, {{0, 0}}), Sample(0, {{1, 50}}), milliseconds(1000), 100));
  CHECK_FALSE(Progressed(Sample(0, {}), Sample(0, {}), milliseconds(1000), 100));
}

TEST_CASE("Progressed: the rule's two blind spots, as docs/user-guide.md states them",
          "[agent][progress_rule]") {
  // The repros. Rank 0 computes silently (a whole CPU) while rank 1 waits idle in a
  // barrier: no progress, so a silent phase longer than --hang-timeout is taken for a hang
  // (cover: a line of output per step or phase, or a longer timeout).
  CHECK_FALSE(Progressed(Sample(0, {{0, 0}, {1, 7}}), Sample(0, {{0, 100}, {1, 7}}),
                         milliseconds(1000), 100));
  // Two ranks spinning silently (a spinning NCCL deadlock's pattern): progress, so the hang is
  // never declared (cover: the file-timer watchdog, or the collectives' own timeout).
  CHECK(Progressed(Sample(0, {{0, 0}, {1, 0}}), Sample(0, {{0, 100}, {1, 100}}), milliseconds(1000),
                   100));
  // The first case's cover: one line of output is progress whatever the CPU says.
  CHECK(Progressed(Sample(0, {{0, 0}, {1, 7}}), Sample(1, {{0, 100}, {1, 7}}), milliseconds(1000),
                   100));
}

}  // namespace
}  // namespace cpplaunch
