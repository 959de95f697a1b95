#include "base/atomic_file.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() /
                 ("cpplaunch_atomic_file_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int ErrorOf(const fs::path& path, std::string_view bytes) {
  try {
    ReplaceFile(path, bytes);
  } catch (const std::system_error& e) {
    return e.code().value();
  }
  return 0;
}

TEST_CASE("ReplaceFile creates a file and replaces an existing one whole", "[base][atomic_file]") {
  const fs::path dir = FreshDir("replace");
  const fs::path path = dir / "file.json";
  ReplaceFile(path, "first version, longer than the second");
  CHECK(ReadAll(path) == "first version, longer than the second");
  ReplaceFile(path, "second");
  CHECK(ReadAll(path) == "second");
  ReplaceFile(path, "");
  CHECK(fs::exists(path));
  CHECK(fs::file_size(path) == 0);
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  fs::remove_all(dir);
}

TEST_CASE("ReplaceFile throws and leaves no temporary when it cannot write or rename",
          "[base][atomic_file]") {
  const fs::path dir = FreshDir("fail");
  CHECK(ErrorOf(dir / "missing" / "file.json", "x") == ENOENT);
  // The target is a non-empty directory: the temporary is written, the rename refused.
  fs::create_directories(dir / "taken" / "inside");
  const int rename_error = ErrorOf(dir / "taken", "x");
  CHECK((rename_error == EISDIR || rename_error == ENOTEMPTY || rename_error == EEXIST));
  CHECK(fs::is_directory(dir / "taken" / "inside"));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  fs::remove_all(dir);
}

TEST_CASE("ReplaceFile names the failing step in the error", "[base][atomic_file]") {
  const fs::path dir = FreshDir("message");
  fs::create_directories(dir / "taken" / "inside");
  try {
    ReplaceFile(dir / "taken", "x");
    FAIL("ReplaceFile over a directory did not throw");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()).rfind("rename to " + (dir / "taken").string(), 0) == 0);
  }
  try {
    ReplaceFile(dir / "missing" / "file.json", "x");
    FAIL("ReplaceFile into a missing directory did not throw");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()).rfind("open " + (dir / "missing").string(), 0) == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("ReplaceFile never follows a symlink planted as its temporary", "[base][atomic_file]") {
  const fs::path dir = FreshDir("symlink");
  const fs::path victim = dir / "victim";
  { std::ofstream(victim) << "precious"; }
  const fs::path path = dir / "error.json";
  const fs::path temp = path.string() + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(victim, temp);
  ReplaceFile(path, "the error document");
  CHECK(ReadAll(victim) == "precious");  // the symlink's target is untouched
  CHECK(ReadAll(path) == "the error document");
  CHECK_FALSE(fs::is_symlink(path));
  CHECK_FALSE(fs::exists(fs::symlink_status(temp)));
  // A dangling symlink (to a file that would be created by following it) is no different.
  fs::create_symlink(dir / "created_through_link", temp);
  ReplaceFile(path, "again");
  CHECK_FALSE(fs::exists(dir / "created_through_link"));
  CHECK(ReadAll(path) == "again");
  fs::remove_all(dir);
}

TEST_CASE("ReplaceFile fails, writing nothing, when its temporary's name cannot be freed",
          "[base][atomic_file]") {
  const fs::path dir = FreshDir("taken_temp");
  const fs::path path = dir / "error.json";
  const fs::path temp = path.string() + ".tmp." + std::to_string(::getpid());
  fs::create_directories(temp / "inside");  // unlink cannot remove a directory
  try {
    ReplaceFile(path, "x");
    FAIL("ReplaceFile with a directory as its temporary did not throw");
  } catch (const std::system_error& e) {
    // Linux says EISDIR for a directory even with O_EXCL; EEXIST elsewhere.
    CHECK((e.code().value() == EEXIST || e.code().value() == EISDIR));
    CHECK(std::string(e.what()).rfind("open " + temp.string(), 0) == 0);
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(fs::is_directory(temp / "inside"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cpplaunch
