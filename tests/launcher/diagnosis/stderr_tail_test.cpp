#include "launcher/diagnosis/stderr_tail.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

TEST_CASE("LastLines keeps the last lines, whole text when shorter") {
  CHECK(LastLines("a\nb\nc\n", 2) == "b\nc");
  CHECK(LastLines("a\nb\nc", 1) == "c");
  CHECK(LastLines("a\nb\nc", 9) == "a\nb\nc");
  CHECK(LastLines("", 3).empty());
  CHECK(LastLines("\n\n", 3).empty());
  CHECK(LastLines("x", 0).empty());
}

TEST_CASE("StderrTailNote shows the last lines of a worker's stderr.log, indented") {
  const fs::path path = fs::temp_directory_path() / ("stderr_tail_" + std::to_string(::getpid()));
  std::ofstream(path) << "Traceback (most recent call last):\n  File \"t.py\", line 1\n"
                         "ValueError: boom\n";
  auto note = StderrTailNote(3, path, 2);
  REQUIRE(note);
  CHECK(*note == "cpplaunch: rank 3 wrote no error file; the last lines of its " + path.string() +
                     ":\n    File \"t.py\", line 1\n  ValueError: boom\n");
  std::ofstream(path, std::ios::trunc).flush();
  CHECK_FALSE(StderrTailNote(3, path, 2));  // empty
  fs::remove(path);
  CHECK_FALSE(StderrTailNote(3, path, 2));  // missing
  CHECK_FALSE(StderrTailNote(3, "", 2));    // logs disabled
}

}  // namespace
}  // namespace cpplaunch
