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
  const std::string word = "sixteen-byte-key";
  CHECK(ReadSecretFile(dir.Write("a", word + "\n")).secret == word);
  CHECK(ReadSecretFile(dir.Write("b", word + "\r\n")).secret == word);
  CHECK(ReadSecretFile(dir.Write("c", word + "\n\n")).secret == word + "\n");  // one newline goes
  const std::string binary("\0\xff\n\x01 binary key bytes", 21);
  CHECK(ReadSecretFile(dir.Write("d", binary)).secret == binary);
  // At most read access for the group: 0640 and 0440 (Kubernetes' fsGroup), and 0400.
  CHECK(ReadSecretFile(dir.Write("e", "group-readable-key", 0640)).secret == "group-readable-key");
  CHECK(ReadSecretFile(dir.Write("f", "group-readable-key", 0440)).secret == "group-readable-key");
  CHECK(ReadSecretFile(dir.Write("g", "owner-read-only-key", 0400)).secret ==
        "owner-read-only-key");
  // Symbolic links are followed, as Kubernetes mounts secrets through them.
  fs::create_symlink(dir.path / "a", dir.path / "link");
  CHECK(ReadSecretFile((dir.path / "link").string()).secret == word);
}

TEST_CASE("ReadSecretFile refuses unusable files in one line each", "[base][secret]") {
  TempDir dir;
  auto error = [](const std::string& path) {
    SecretFile file = ReadSecretFile(path);
    CHECK_FALSE(file.secret);
    CHECK(file.error.find('\n') == std::string::npos);
    return file.error;
  };
  const std::string key = "a-long-enough-shared-secret\n";
  const std::string loose = dir.Write("loose", key, 0644);
  CHECK(error(loose) == "the secret file " + loose +
                            " is readable or writable by other users (mode 0644); run chmod 600 " +
                            loose);
  CHECK_THAT(error(dir.Write("writable", key, 0602)), Catch::Contains("mode 0602"));
  CHECK_THAT(error(dir.Write("readable", key, 0604)), Catch::Contains("mode 0604"));
  // The repro: 0660 and 0620 were accepted.
  const std::string group_writable = dir.Write("group-writable", key, 0660);
  CHECK(error(group_writable) == "the secret file " + group_writable +
                                     " gives its group more than read access (mode 0660); run "
                                     "chmod 600 " +
                                     group_writable + " (or chmod 640 to share it with the group)");
  CHECK_THAT(error(dir.Write("group-write-only", key, 0620)), Catch::Contains("mode 0620"));
  CHECK_THAT(error(dir.Write("group-exec", key, 0650)), Catch::Contains("mode 0650"));
  const std::string empty = dir.Write("empty", "\n");
  CHECK(error(empty) == "the secret file " + empty + " is empty; put the shared secret in it");
  // The repro: a one-space secret was accepted.
  const std::string space = dir.Write("space", " \n");
  CHECK(error(space) == "the secret file " + space +
                            " holds only whitespace; put the shared "
                            "secret in it");
  CHECK_THAT(error(dir.Write("blanks", std::string(40, ' ') + "\t\r\n")),
             Catch::EndsWith("holds only whitespace; put the shared secret in it"));
  const std::string short_key = dir.Write("short", "word\n");
  CHECK(error(short_key) == "the secret file " + short_key +
                                " holds 4 bytes, fewer than the 16 a secret needs; write a "
                                "longer one (head -c 32 /dev/urandom | base64 > " +
                                short_key + ")");
  CHECK(ReadSecretFile(dir.Write("fifteen", std::string(15, 'k'))).error.find("holds 15 bytes") !=
        std::string::npos);
  CHECK(ReadSecretFile(dir.Write("sixteen", std::string(16, 'k'))).secret == std::string(16, 'k'));
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

TEST_CASE("A secret file must belong to its reader or to root, as sshd requires",
          "[base][secret]") {
  CHECK(SecretFileAccessProblem("/s", 0100600, 1000, 1000).empty());
  CHECK(SecretFileAccessProblem("/s", 0100440, 0, 1000).empty());  // root's, group-readable
  // The repro: a root agent accepted a file owned by nobody.
  CHECK(SecretFileAccessProblem("/s", 0100600, 65534, 0) ==
        "the secret file /s is owned by uid 65534, not by this user (uid 0) or root; run chown 0 "
        "/s");
  CHECK_THAT(SecretFileAccessProblem("/s", 0100600, 1001, 1000),
             Catch::Contains("owned by uid 1001, not by this user (uid 1000)"));
}

TEST_CASE("ReadSecretFile refuses a file another user owns", "[base][secret]") {
  if (::geteuid() != 0) return;  // only root can give a file away; the rule is tested above
  TempDir dir;
  const std::string path = dir.Write("nobody", "a-long-enough-shared-secret");
  REQUIRE(::chown(path.c_str(), 65534, static_cast<gid_t>(-1)) == 0);
  CHECK(ReadSecretFile(path).error ==
        "the secret file " + path +
            " is owned by uid 65534, not by this user (uid 0) or root; "
            "run chown 0 " +
            path);
}

}  // namespace
}  // namespace cpplaunch
