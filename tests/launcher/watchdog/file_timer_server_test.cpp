#include "launcher/watchdog/file_timer_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

namespace cpplaunch {
namespace fs = std::filesystem;
namespace {

double WallNow() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// A child that sleeps until killed; reaped (and killed, if still there) at the end.
class Sleeper {
 public:
  Sleeper() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Sleeper() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  pid_t pid() const { return pid_; }
  // The wait status once the child is gone.
  int Wait() {
    ::waitpid(pid_, &status_, 0);
    reaped_ = true;
    return status_;
  }
  bool Alive() { return ::waitpid(pid_, &status_, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// What torch's FileTimerClient does: open without blocking, write one line, close.
void Send(const fs::path& fifo, const std::string& line) {
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(fd >= 0);
  const std::string text = line + "\n";
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
}

std::string Request(pid_t pid, const std::string& scope, double expiration, int signal) {
  char text[256];
  std::snprintf(text, sizeof text,
                R"({"version": 1, "pid": %d, "scope_id": "%s", "expiration_time": %.6f, )"
                R"("signal": %d})",
                static_cast<int>(pid), scope.c_str(), expiration, signal);
  return text;
}

fs::path FifoPath() { return FileTimerServer::DefaultPath(fs::temp_directory_path()); }

}  // namespace

TEST_CASE("FileTimerServer kills the pid of an expired timer with its signal",
          "[launcher][watchdog]") {
  boost::asio::io_context io;
  std::vector<std::string> said;
  std::vector<WatchdogKill> seen;
  const fs::path path = FifoPath();
  Sleeper sleeper;
  {
    FileTimerServer server(
        io, path, [&](const std::string& line) { said.push_back(line); },
        [&](const WatchdogKill& kill) {
          seen.push_back(kill);
          io.stop();
        });
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);  // only the agent's user may ask for a kill
    const auto start = std::chrono::steady_clock::now();
    Send(path, Request(sleeper.pid(), "step", WallNow() + 0.3, SIGKILL));
    io.run_for(std::chrono::seconds(10));
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].expiry.scope_id == "step");
    CHECK(seen[0].delivered);
    CHECK(waited >= 0.25);
    CHECK(waited < 3);
    const int status = sleeper.Wait();
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    server.OnWorkerExit(3, sleeper.pid());
    REQUIRE(server.kills().size() == 1);
    CHECK(server.kills()[0].local_rank == 3);
    CHECK(FormatWatchdogKills(server.kills(), 8).find("rank 11 (local rank 3") !=
          std::string::npos);
  }
  CHECK_FALSE(fs::exists(path));  // the server removes its FIFO
  CHECK(said.empty());
}

TEST_CASE("FileTimerServer leaves a released scope alone", "[launcher][watchdog]") {
  boost::asio::io_context io;
  std::vector<WatchdogKill> seen;
  Sleeper sleeper;
  FileTimerServer server(
      io, FifoPath(), [](const std::string&) {},
      [&](const WatchdogKill& kill) { seen.push_back(kill); });
  Send(server.path(), Request(sleeper.pid(), "step", WallNow() + 0.3, SIGKILL));
  Send(server.path(), Request(sleeper.pid(), "step", -1, 0));
  io.run_for(std::chrono::milliseconds(800));
  CHECK(seen.empty());
  CHECK(sleeper.Alive());
}

TEST_CASE("FileTimerServer reports a line that is not torch's once and goes on",
          "[launcher][watchdog]") {
  boost::asio::io_context io;
  std::vector<std::string> said;
  std::vector<WatchdogKill> seen;
  Sleeper sleeper;
  FileTimerServer server(
      io, FifoPath(), [&](const std::string& line) { said.push_back(line); },
      [&](const WatchdogKill& kill) {
        seen.push_back(kill);
        io.stop();
      });
  Send(server.path(), "garbage");
  Send(server.path(), "more garbage");
  Send(server.path(), Request(sleeper.pid(), "after", WallNow() + 0.1, SIGTERM));
  io.run_for(std::chrono::seconds(10));
  REQUIRE(said.size() == 1);
  CHECK(said[0] == "watchdog: ignoring a request that is not torch's (not JSON)");
  REQUIRE(seen.size() == 1);
  const int status = sleeper.Wait();
  CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("FileTimerServer refuses to make a FIFO where it cannot", "[launcher][watchdog]") {
  boost::asio::io_context io;
  CHECK_THROWS_AS(FileTimerServer(io, "/nonexistent-dir/watchdog", [](const std::string&) {}),
                  std::system_error);
}

}  // namespace cpplaunch
