#include "launcher/output/filtered_log.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cpplaunch {
namespace fs = std::filesystem;

TEST_CASE("FilteredLog appends the matching lines of every batch to one file",
          "[output][filters]") {
  const fs::path path = fs::temp_directory_path() / "filtered_log_test.log";
  {
    std::ofstream old(path);
    old << "from an earlier run\n";
  }
  int errors = 0;
  {
    FilteredLog log({"keep"}, path, [&](const fs::path&, int) { ++errors; });
    log.Write("[r0]:keep 1\n[r0]:drop\n", 5);
    log.Write("[r1]:drop\n[r1]:keep 2\n", 5);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "[r0]:keep 1\n[r1]:keep 2\n");  // truncated when opened
  CHECK(errors == 0);
  fs::remove(path);
}

TEST_CASE("FilteredLog reports a full disk once and stops writing", "[output][filters]") {
  if (!fs::exists("/dev/full")) {
    WARN("skipped: no /dev/full on this host");
    return;
  }
  int errors = 0;
  FilteredLog log({"x"}, "/dev/full", [&](const fs::path& path, int error) {
    CHECK(path == "/dev/full");
    CHECK(error == ENOSPC);
    ++errors;
  });
  log.Write("x\n", 0);
  log.Write("x\n", 0);
  CHECK(errors == 1);
}

// Issue 23: the filters left an empty file in every attempt's directory, matched or not (and
// the default log directory in /tmp with it).
TEST_CASE("FilteredLog creates its file with the first matching line only", "[output][filters]") {
  const fs::path path = fs::temp_directory_path() / "filtered_log_lazy_test.log";
  fs::remove(path);
  {
    FilteredLog log({"keep"}, path, {});
    log.Write("[r0]:drop\n", 5);
    CHECK_FALSE(fs::exists(path));
  }
  CHECK_FALSE(fs::exists(path));
  {
    FilteredLog log({"keep"}, path, {});
    log.Write("[r0]:keep\n", 5);
    CHECK(fs::exists(path));
  }
  fs::remove(path);
}

TEST_CASE("FilteredLog reports a file it cannot create once", "[output][filters]") {
  std::vector<int> errors;
  FilteredLog log({"x"}, "/nonexistent-dir/filtered.log",
                  [&](const fs::path&, int error) { errors.push_back(error); });
  log.Write("x\n", 0);
  log.Write("x\n", 0);
  CHECK(errors == std::vector<int>{ENOENT});
}

}  // namespace cpplaunch
