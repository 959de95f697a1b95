#include "base/memory_trim.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace cpplaunch {
namespace {

// Resident bytes of this process (/proc/self/statm's second field, in pages).
long ResidentBytes() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  if (file == nullptr) return -1;
  long size = 0;
  long resident = -1;
  if (std::fscanf(file, "%ld %ld", &size, &resident) != 2) resident = -1;
  std::fclose(file);
  return resident * 4096;
}

constexpr long kMiB = 1024L * 1024;

// The store's waits are many small blocks (hash nodes, entry lists); freed, glibc keeps their
// pages unless trimmed, because a few blocks still in use at the top of the heap stop it from
// shrinking. The trim must give the freed pages back.
TEST_CASE("ReturnFreeHeapToSystem gives freed small blocks back", "[memory_trim]") {
#if !defined(__GLIBC__)
  WARN("not checked: malloc_trim is glibc's");
  return;
#endif
  const long start = ResidentBytes();
  REQUIRE(start > 0);
  // 96 MiB in 96-byte blocks, then a block at the top that stays, as a live key would.
  std::vector<std::unique_ptr<char[]>> blocks(1 << 20);
  for (auto& block : blocks) {
    block = std::make_unique<char[]>(96);
    block[0] = 1;  // touched: resident
  }
  auto keep = std::make_unique<char[]>(96);
  keep[0] = 1;
  const long filled = ResidentBytes();
  REQUIRE(filled - start > 64 * kMiB);
  std::vector<std::unique_ptr<char[]>>().swap(blocks);
  const long freed = ResidentBytes();
  ReturnFreeHeapToSystem();
  const long trimmed = ResidentBytes();
  INFO("resident: start " << start / kMiB << " MiB, filled " << filled / kMiB << " MiB, freed "
                          << freed / kMiB << " MiB, trimmed " << trimmed / kMiB << " MiB");
  CHECK(trimmed - start < 16 * kMiB);
}

}  // namespace
}  // namespace cpplaunch
