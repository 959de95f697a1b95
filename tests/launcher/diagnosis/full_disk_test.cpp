#include "launcher/diagnosis/full_disk.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("a full file system under the log files is named with the way out") {
  CHECK(FullDiskNote("/tmp/x/attempt_0", 0) ==
        "No space left on device: the workers' log files in /tmp/x/attempt_0 could not be "
        "written (0 bytes free there); free some space, or put them elsewhere with --log-dir or "
        "TMPDIR");
  CHECK(FullDiskNote("/tmp/x", kFullBelow - 1));
  CHECK_FALSE(FullDiskNote("/tmp/x", kFullBelow));
  CHECK_FALSE(FullDiskNote("/tmp/x", std::nullopt));
}

TEST_CASE("FreeBytes reads a real file system and nothing for a missing path") {
  CHECK(FreeBytes("/"));
  CHECK_FALSE(FreeBytes("/nonexistent/dir/for/full_disk_test"));
}

}  // namespace
}  // namespace cpplaunch
