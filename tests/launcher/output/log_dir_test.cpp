#include "launcher/output/log_dir.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <fstream>
#include <regex>
#include <system_error>

namespace cpplaunch {
namespace fs = std::filesystem;
namespace {

// A fresh directory removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "log_dir_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

TEST_CASE("LogDir creates <base>/<run_id>_XXXXXXXX at start", "[launcher][log_dir]") {
  ScratchDir scratch;
  const fs::path base = scratch.path() / "logs" / "nested";
  LogDir dir = LogDir::Create(base.string(), "myrun");
  REQUIRE(dir.enabled());
  CHECK(dir.run_dir().parent_path() == base);
  CHECK(std::regex_match(dir.run_dir().filename().string(), std::regex("myrun_[a-z0-9_]{8}")));
  CHECK(fs::is_directory(dir.run_dir()));
  LogDir second = LogDir::Create(base.string(), "myrun");
  CHECK(second.run_dir() != dir.run_dir());
}

TEST_CASE("LogDir without a base makes torchelastic_XXXXXXXX in the temp root",
          "[launcher][log_dir]") {
  ScratchDir scratch;
  LogDir dir = LogDir::Create("", "none", scratch.path());
  const fs::path base = dir.run_dir().parent_path();
  CHECK(base.parent_path() == scratch.path());
  CHECK(std::regex_match(base.filename().string(), std::regex("torchelastic_[a-z0-9_]{8}")));
  CHECK(std::regex_match(dir.run_dir().filename().string(), std::regex("none_[a-z0-9_]{8}")));
}

// Issue 23: the run's directory could not be made (a run id too long for a file name) and an
// empty torchelastic_XXXXXXXX stayed in /tmp.
TEST_CASE("LogDir leaves no temporary directory behind when the run's cannot be made",
          "[launcher][log_dir]") {
  ScratchDir scratch;
  CHECK_THROWS_AS(LogDir::Create("", std::string(300, 'x'), scratch.path()), std::system_error);
  CHECK(fs::is_empty(scratch.path()));
}

TEST_CASE("LogDir attempt layout has one directory per local rank and torchrun's file names",
          "[launcher][log_dir]") {
  ScratchDir scratch;
  LogDir dir = LogDir::Create(scratch.path().string(), "r");
  dir.PrepareAttempt(0, 3);
  const fs::path attempt = dir.run_dir() / "attempt_0";
  CHECK(dir.AttemptDir(0) == attempt);
  for (int lr = 0; lr < 3; ++lr) CHECK(fs::is_directory(attempt / std::to_string(lr)));
  CHECK_FALSE(fs::exists(attempt / "3"));
  CHECK(dir.StdoutLog(0, 2) == attempt / "2" / "stdout.log");
  CHECK(dir.StderrLog(0, 2) == attempt / "2" / "stderr.log");
  CHECK(dir.ErrorFile(0, 2) == attempt / "2" / "error.json");
  CHECK(dir.StdoutLog(4, 1) == dir.run_dir() / "attempt_4" / "1" / "stdout.log");
}

TEST_CASE("LogDir recreates an attempt directory that already exists", "[launcher][log_dir]") {
  ScratchDir scratch;
  LogDir dir = LogDir::Create(scratch.path().string(), "r");
  dir.PrepareAttempt(1, 2);
  std::ofstream(dir.ErrorFile(1, 0)) << "{}";
  std::ofstream(dir.StdoutLog(1, 1)) << "old";
  dir.PrepareAttempt(1, 1);
  CHECK(fs::is_directory(dir.RankDir(1, 0)));
  CHECK_FALSE(fs::exists(dir.ErrorFile(1, 0)));
  CHECK_FALSE(fs::exists(dir.RankDir(1, 1)));
}

TEST_CASE("LogDir /dev/null disables the logs but keeps error files in a private directory",
          "[launcher][log_dir]") {
  ScratchDir scratch;
  LogDir dir = LogDir::Create("/dev/null", "r", scratch.path());
  CHECK_FALSE(dir.enabled());
  CHECK(dir.run_dir().empty());
  dir.PrepareAttempt(0, 2);
  CHECK(dir.StdoutLog(0, 1).empty());
  CHECK(dir.StderrLog(0, 1).empty());
  CHECK(dir.AttemptDir(0).empty());
  // The error file, so that an @record traceback reaches the failure summary.
  const fs::path error = dir.ErrorFile(0, 1);
  REQUIRE_FALSE(error.empty());
  CHECK(error.parent_path().parent_path().parent_path().filename().string().rfind(
            "cpplaunch_errors_", 0) == 0);
  CHECK(fs::is_directory(error.parent_path()));
  std::ofstream(error) << "{}";
  CHECK_FALSE(dir.HoldsFiles());  // no log directory to name
  dir.CleanUpAtExit();
  CHECK(fs::is_empty(scratch.path()));
}

TEST_CASE("LogDir /dev/null without a writable temp root has no error files, as torchrun",
          "[launcher][log_dir]") {
  LogDir dir = LogDir::Create("/dev/null", "r", "/nonexistent/tmp");
  dir.PrepareAttempt(0, 1);
  CHECK(dir.ErrorFile(0, 0).empty());
}

TEST_CASE("LogDir removes its empty temporary directory at the end, never a file or --log-dir",
          "[launcher][log_dir]") {
  ScratchDir scratch;
  LogDir temp = LogDir::Create("", "r", scratch.path());
  temp.PrepareAttempt(0, 2);
  CHECK_FALSE(temp.HoldsFiles());
  temp.CleanUpAtExit();
  CHECK(fs::is_empty(scratch.path()));  // torchelastic_XXXXXXXX is gone too

  LogDir kept = LogDir::Create("", "r", scratch.path());
  kept.PrepareAttempt(0, 2);
  std::ofstream(kept.ErrorFile(0, 1)) << "{}";
  CHECK(kept.HoldsFiles());
  kept.CleanUpAtExit();
  CHECK(fs::exists(kept.ErrorFile(0, 1)));
  CHECK(fs::is_directory(kept.RankDir(0, 0)));  // a tree holding a file is kept whole

  const fs::path given = scratch.path() / "given";
  LogDir user = LogDir::Create(given.string(), "r");
  user.PrepareAttempt(0, 1);
  user.CleanUpAtExit();
  CHECK(fs::is_directory(user.RankDir(0, 0)));
}

TEST_CASE("LogDir refuses a base that is a file", "[launcher][log_dir]") {
  ScratchDir scratch;
  const fs::path file = scratch.path() / "plain";
  std::ofstream(file) << "x";
  try {
    LogDir::Create(file.string(), "r");
    FAIL("no exception");
  } catch (const std::system_error& e) {
    CHECK(e.code().value() == ENOTDIR);
    CHECK(std::string(e.what()).starts_with("--log-dir " + file.string() + ": it is a file"));
  }
}

TEST_CASE("LogDir's error for a directory it cannot create names --log-dir, path and way out",
          "[launcher][log_dir]") {
  // Issue 27: a raw "filesystem error: cannot create directories" named no option. /proc
  // refuses a new directory even to root.
  try {
    LogDir::Create("/proc/cpplaunch_log_dir_test/logs", "r");
    FAIL("no exception");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()) ==
          "--log-dir /proc/cpplaunch_log_dir_test/logs: cannot create "
          "/proc/cpplaunch_log_dir_test/logs: No such file or directory; give a directory you "
          "can write to, or --log-dir=/dev/null for no log files");
  }
}

}  // namespace cpplaunch
