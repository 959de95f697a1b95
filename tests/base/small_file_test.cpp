// ReadSmallFile on real files: a regular file, its limit, /proc, and what cannot be read.

#include "base/small_file.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace cpplaunch {
namespace {

TEST_CASE("ReadSmallFile reads whole files up to a limit", "[base][small_file]") {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("small_file_test_" + std::to_string(::getpid()));
  std::ofstream(path) << std::string(10000, 'x');  // more than one read's chunk
  CHECK(ReadSmallFile(path)->size() == 10000);
  CHECK(ReadSmallFile(path, 100) == std::string(100, 'x'));
  CHECK(ReadSmallFile(path, 0) == std::string());
  std::ofstream(path, std::ios::trunc).flush();
  CHECK(ReadSmallFile(path) == std::string());
  std::filesystem::remove(path);
  CHECK_FALSE(ReadSmallFile(path));
}

TEST_CASE("ReadSmallFile reads /proc entries and refuses a directory", "[base][small_file]") {
  // /proc files report size 0: only reading until EOF finds their text.
  const auto stat = ReadSmallFile("/proc/self/stat");
  REQUIRE(stat);
  CHECK(stat->rfind(std::to_string(::getpid()) + " (", 0) == 0);
  CHECK_FALSE(ReadSmallFile("/proc"));
}

}  // namespace
}  // namespace cpplaunch
