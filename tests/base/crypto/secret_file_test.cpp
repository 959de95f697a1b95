#include "base/crypto/secret_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("cpplaunch_secret_file_" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }

  std::string Write(const std::string& name, const std::string& bytes, mode_t mode = 0600) {
    fs::path file = path / name;
    std::ofstream(file, std::ios::binary) << bytes;
    ::chmod(file.c_str(), mode);
    return file.string();
  }
};

TEST_CASE("ReadSecretFile reads a private file, without one trailing newline", "[base][secret]") {
  TempDir dir;
  CHECK(ReadSecretFile(dir.Write("a", "word\n")).secret == "word");
  CHECK(ReadSecretFile(dir.Write("b", "word\r\n")).secret == "word");
  CHECK(ReadSecretFile(dir.Write("c", "two\n\n")).secret == "two\n");  // only one newline goes
  const std::string binary("\0\xff\n\x01", 4);
  CHECK(ReadSecretFile(dir.Write("d", binary)).secret == binary);
  CHECK(ReadSecretFile(dir.Write("e", "group-readable", 0640)).secret == "group-readable");
  // Symbolic links are followed, as Kubernetes mounts secrets through them.
  fs::create_symlink(dir.path / "a", dir.path / "link");
  CHECK(ReadSecretFile((dir.path / "link").string()).secret == "word");
}

TEST_CASE("ReadSecretFile refuses unusable files in one line each", "[base][secret]") {
  TempDir dir;
  auto error = [](const std::string& path) {
    SecretFile file = ReadSecretFile(path);
    CHECK_FALSE(file.secret);
    CHECK(file.error.find('\n') == std::string::npos);
    return file.error;
  };
  const std::string loose = dir.Write("loose", "s\n", 0644);
  CHECK(error(loose) == "the secret file " + loose +
                            " is readable or writable by other users (mode 0644); run chmod 600 " +
                            loose);
  CHECK_THAT(error(dir.Write("writable", "s", 0602)), Catch::Contains("mode 0602"));
  const std::string empty = dir.Write("empty", "\n");
  CHECK(error(empty) == "the secret file " + empty + " is empty; put the shared secret in it");
  CHECK_THAT(error((dir.path / "missing").string()),
             Catch::StartsWith("cannot open the secret file") &&
                 Catch::EndsWith("No such file or directory"));
  CHECK_THAT(error(dir.path.string()), Catch::EndsWith("is not a regular file"));
  CHECK_THAT(error(dir.Write("big", std::string(kMaxSecretBytes + 1, 'x'))),
             Catch::Contains("is larger than 65536 bytes"));
  CHECK(error("") == "the secret file path is empty");
  // A FIFO is refused at once rather than waited on.
  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(error(fifo.string()), Catch::EndsWith("is not a regular file"));
}

}  // namespace
}  // namespace cpplaunch
