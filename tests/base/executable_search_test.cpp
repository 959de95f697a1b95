#include "base/executable_search.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("exec_search_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  fs::path File(const std::string& name, fs::perms perms) const {
    fs::path file = path / name;
    std::ofstream(file) << "#!/bin/sh\n";
    fs::permissions(file, perms);
    return file;
  }
};

TEST_CASE("FindExecutable searches PATH in order as execvp does") {
  TempDir dir;
  fs::create_directories(dir.path / "a");
  fs::create_directories(dir.path / "b");
  std::ofstream(dir.path / "b" / "tool") << "#!/bin/sh\n";
  fs::permissions(dir.path / "b" / "tool", fs::perms::owner_all);
  const std::string path = (dir.path / "a").string() + ":" + (dir.path / "b").string();
  ExecutableSearch search = FindExecutable("tool", path.c_str());
  REQUIRE(search.found);
  CHECK(*search.found == (dir.path / "b" / "tool").string());
}

TEST_CASE("FindExecutable skips directories and reports files it may not execute") {
  TempDir dir;
  fs::create_directories(dir.path / "tool");  // a directory of that name does not count
  fs::path plain = dir.File("plain", fs::perms::owner_read | fs::perms::owner_write);
  const std::string path = dir.path.string();
  CHECK_FALSE(FindExecutable("tool", path.c_str()).found);
  CHECK(FindExecutable("tool", path.c_str()).not_executable.empty());
  // No x bit at all: even root may not execute it (access(X_OK) asks for one).
  ExecutableSearch search = FindExecutable(plain.string(), nullptr);
  CHECK_FALSE(search.found);
  REQUIRE(search.not_executable.size() == 1);
  CHECK(search.not_executable[0] == plain.string());
}

TEST_CASE("FindExecutable takes a name with a slash as it is, and an unset PATH as /bin:/usr/bin") {
  CHECK(FindExecutable("/bin/sh", "/nonexistent").found == std::optional<std::string>("/bin/sh"));
  CHECK(FindExecutable("sh", nullptr).found.has_value());
  CHECK_FALSE(FindExecutable("sh", "/nonexistent").found);
  CHECK_FALSE(FindExecutable("", nullptr).found);
}

}  // namespace
}  // namespace cpplaunch
