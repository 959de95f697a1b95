#include "base/file_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/fd_io.h"

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

struct ScratchFile {
  ScratchFile() {
    std::string pattern = (fs::temp_directory_path() / "file_watch_test_XXXXXX").string();
    fd = UniqueFd(::mkstemp(pattern.data()));
    path = pattern;
  }
  ~ScratchFile() {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
  fs::path path;
  UniqueFd fd;
};

std::vector<int> ReadEvents(int watcher) {
  char buffer[4096];
  const IoResult result = ReadSome(watcher, buffer, sizeof buffer);
  return result.ok() ? ParseWatchEvents(buffer, result.bytes) : std::vector<int>{};
}

TEST_CASE("A file watch reports writes to the watched file, and nothing before them") {
  ScratchFile a, b;
  REQUIRE(a.fd.valid());
  REQUIRE(b.fd.valid());
  const UniqueFd watcher = OpenFileWatcher();
  const int id_a = WatchForWrites(watcher.get(), a.path);
  const int id_b = WatchForWrites(watcher.get(), b.path);
  CHECK(id_a != id_b);
  CHECK_FALSE(WaitFd(watcher.get(), POLLIN, std::chrono::milliseconds(20)));  // idle: silent
  CHECK(WriteSome(b.fd.get(), "one\n").ok());
  REQUIRE(WaitFd(watcher.get(), POLLIN, std::chrono::seconds(5)));
  CHECK(ReadEvents(watcher.get()) == std::vector<int>{id_b});
  // A second descriptor of the same file (the reader's) sees what the writer appended.
  const UniqueFd reader(::open(b.path.c_str(), O_RDONLY | O_CLOEXEC));
  char got[16];
  const IoResult read = ReadAt(reader.get(), got, sizeof got, 1);
  REQUIRE(read.ok());
  CHECK(std::string(got, read.bytes) == "ne\n");
  CHECK(ReadAt(reader.get(), got, sizeof got, 4).status == IoResult::Status::kEof);
  Unwatch(watcher.get(), id_b);
  (void)ReadEvents(watcher.get());  // the removal's IN_IGNORED
  CHECK(WriteSome(b.fd.get(), "two\n").ok());
  CHECK_FALSE(WaitFd(watcher.get(), POLLIN, std::chrono::milliseconds(20)));
}

TEST_CASE("ParseWatchEvents reads packed events with names and an overflow") {
  CHECK(ParseWatchEvents(nullptr, 0).empty());
  std::string bytes;
  auto append = [&](int wd, std::uint32_t mask, std::uint32_t name_len) {
    inotify_event event{};
    event.wd = wd;
    event.mask = mask;
    event.len = name_len;
    bytes.append(reinterpret_cast<const char*>(&event), sizeof event);
    bytes.append(name_len, 'n');
  };
  append(3, IN_MODIFY, 16);
  append(-1, IN_Q_OVERFLOW, 0);
  append(7, IN_MODIFY, 0);
  CHECK(ParseWatchEvents(bytes.data(), bytes.size()) == std::vector<int>{3, kWatchOverflow, 7});
  // A truncated trailing header is not an event.
  CHECK(ParseWatchEvents(bytes.data(), bytes.size() - 4) == std::vector<int>{3, kWatchOverflow});
}

TEST_CASE("WatchForWrites on a missing file throws with the path") {
  const UniqueFd watcher = OpenFileWatcher();
  CHECK_THROWS_WITH(WatchForWrites(watcher.get(), "/nonexistent/cpplaunch-watch"),
                    Catch::Contains("/nonexistent/cpplaunch-watch"));
}

}  // namespace
}  // namespace cpplaunch
