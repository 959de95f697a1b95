#include "launcher/log/agent_log.h"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "process_test_util.h"

namespace cpplaunch {
namespace {

using testing::TempDir;

struct Logged {
  std::vector<std::string> console;
  AgentLog log;
  explicit Logged(LogLevel level, std::string warning = "")
      : log(LogLevelSetting{level, std::move(warning)},
            [this](std::string_view line) { console.emplace_back(line); }) {}
};

std::vector<std::string> FileLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "2026-11-27 11:19:58.238 +00:00 info: text" -> "info: text"
std::string Untimed(const std::string& line) {
  static const std::regex kTime(R"(^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d\d:\d\d )");
  REQUIRE(std::regex_search(line, kTime));
  return std::regex_replace(line, kTime, "");
}

TEST_CASE("AgentLog: the console shows said lines always, INFO and DEBUG as asked", "[log]") {
  Logged warning(LogLevel::kWarning);
  warning.log.Say("said");
  warning.log.Info("info");
  warning.log.Debug("debug");
  CHECK(warning.console == std::vector<std::string>{"said"});
  CHECK_FALSE(warning.log.debug());

  Logged info(LogLevel::kInfo);
  info.log.Info("info");
  info.log.Debug("debug");
  CHECK(info.console == std::vector<std::string>{"info"});

  Logged debug(LogLevel::kDebug);
  debug.log.Info("info");
  debug.log.Debug("debug");
  CHECK(debug.console == std::vector<std::string>{"info", "debug"});

  // LOGLEVEL=ERROR hides no said line: they name what went wrong.
  // A LOGLEVEL that is no level is said once, at the start.
  Logged unknown(LogLevel::kWarning, "LOGLEVEL=chatty is not a log level");
  CHECK(unknown.console == std::vector<std::string>{"LOGLEVEL=chatty is not a log level"});

  Logged error(LogLevel::kError);
  error.log.Say("error: it broke");
  error.log.Info("info");
  CHECK(error.console == std::vector<std::string>{"error: it broke"});
}

TEST_CASE("AgentLog: agent.log keeps INFO whatever the level, with times and levels", "[log]") {
  TempDir dir;
  Logged logged(LogLevel::kWarning);
  logged.log.Info("before the file");  // the backlog
  logged.log.Say("said before");
  REQUIRE(logged.log.OpenFile(dir.File("agent.log")).empty());
  logged.log.Info("after");
  logged.log.Debug("not at WARNING");
  logged.log.Say("error: bad input");
  std::vector<std::string> lines;
  for (const auto& line : FileLines(dir.File("agent.log"))) lines.push_back(Untimed(line));
  CHECK(lines == std::vector<std::string>{"info: before the file", "warning: said before",
                                          "info: after", "error: error: bad input"});
  CHECK(logged.console == std::vector<std::string>{"said before", "error: bad input"});
}

TEST_CASE("AgentLog: DEBUG lines reach agent.log at LOGLEVEL=DEBUG", "[log]") {
  TempDir dir;
  Logged logged(LogLevel::kDebug);
  REQUIRE(logged.log.OpenFile(dir.File("agent.log")).empty());
  logged.log.Debug("store: SET 'k' answered in 40 us");
  const auto lines = FileLines(dir.File("agent.log"));
  REQUIRE(lines.size() == 1);
  CHECK(Untimed(lines[0]) == "debug: store: SET 'k' answered in 40 us");
}

TEST_CASE("AgentLog: a kept block goes to agent.log only, line by line", "[log]") {
  TempDir dir;
  Logged logged(LogLevel::kWarning);
  logged.log.Keep("=====\nsh FAILED\n\n=====\n");
  REQUIRE(logged.log.OpenFile(dir.File("agent.log")).empty());
  logged.log.Keep("rank : 1\n");
  std::vector<std::string> lines;
  for (const auto& line : FileLines(dir.File("agent.log"))) lines.push_back(Untimed(line));
  CHECK(lines == std::vector<std::string>{"error: =====", "error: sh FAILED",
                                          "error: =====", "error: rank : 1"});
  CHECK(logged.console.empty());
}

TEST_CASE("AgentLog: the backlog before the file is bounded", "[log]") {
  TempDir dir;
  Logged logged(LogLevel::kWarning);
  for (int i = 0; i < 300; ++i) logged.log.Info("line " + std::to_string(i));
  REQUIRE(logged.log.OpenFile(dir.File("agent.log")).empty());
  const auto lines = FileLines(dir.File("agent.log"));
  REQUIRE(lines.size() == AgentLog::kBacklog);
  CHECK(Untimed(lines.front()) == "info: line " + std::to_string(300 - AgentLog::kBacklog));
  CHECK(Untimed(lines.back()) == "info: line 299");
}

TEST_CASE("AgentLog: agent.log is flushed line by line and not inherited by workers", "[log]") {
  TempDir dir;
  const std::string path = dir.File("agent.log");
  Logged logged(LogLevel::kWarning);
  REQUIRE(logged.log.OpenFile(path).empty());
  logged.log.Info("on disk at once");
  CHECK(FileLines(path).size() == 1);  // read while the log is open: a SIGKILL loses nothing
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path(), ec) != path) continue;
    const int fd = std::stoi(entry.path().filename().string());
    CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    ++found;
  }
  CHECK(found == 1);
}

TEST_CASE("AgentLog: an unwritable agent.log is one line; the console goes on", "[log]") {
  TempDir dir;
  Logged logged(LogLevel::kWarning);
  std::ofstream(dir.File("a-file")) << "x";
  const std::string path = dir.File("a-file/agent.log");  // its directory is a file
  const std::string problem = logged.log.OpenFile(path);
  CHECK_THAT(problem, Catch::Matchers::StartsWith("cannot write the agent's log " + path));
  CHECK(problem.find('\n') == std::string::npos);
  logged.log.Say("still said");
  CHECK(logged.console == std::vector<std::string>{"still said"});
}

}  // namespace
}  // namespace cpplaunch
