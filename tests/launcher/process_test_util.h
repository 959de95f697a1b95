#pragma once
// Helpers for launcher process tests: pipes, bounded waits, temp dirs, liveness checks.
// Test-only code; every wait is bounded so a broken implementation fails instead of hanging.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "launcher/process/worker_group.h"

namespace cpplaunch::testing {

inline const char* TestWorker() { return TEST_WORKER_PATH; }

// A worker running test_worker with `args`, a minimal PATH, and stdout on `stdout_fd`
// (-1: the agent's).
inline ProcessSpec TestWorkerSpec(int id, std::vector<std::string> args, int stdout_fd = -1) {
  ProcessSpec spec;
  spec.id = id;
  spec.argv.push_back(TestWorker());
  for (auto& a : args) spec.argv.push_back(a);
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.stdout_fd = stdout_fd;
  return spec;
}

// Milliseconds as a double, for measurements printed by the tests.
template <typename Duration>
double Ms(Duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// Measurements go to stderr so they show in ctest's verbose output even when tests pass.
inline void Measured(const std::string& text) {
  std::fprintf(stderr, "[measured] %s\n", text.c_str());
}

// A pipe whose ends close with it (or earlier, by CloseRead/CloseWrite).
class Pipe {
 public:
  explicit Pipe(bool cloexec = true) {
    int fds[2];
    if (::pipe2(fds, cloexec ? O_CLOEXEC : 0) != 0) std::abort();
    read_.reset(fds[0]);
    write_.reset(fds[1]);
  }
  int read_fd() const { return read_.get(); }
  int write_fd() const { return write_.get(); }
  void CloseRead() { read_.reset(); }
  void CloseWrite() { write_.reset(); }

  // Reads until `needle` appears, EOF, or the timeout; returns everything read. WaitFd and
  // ReadSome retry EINTR (the SIGCHLD of the group under test).
  std::string ReadUntil(const std::string& needle, std::chrono::milliseconds timeout) {
    std::string data;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (data.find(needle) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      if (!WaitFd(read_.get(), POLLIN, left)) break;
      char buf[4096];
      const IoResult r = ReadSome(read_.get(), buf, sizeof(buf));
      if (!r.ok()) break;
      data.append(buf, r.bytes);
    }
    return data;
  }
  std::string ReadAll(std::chrono::milliseconds timeout) { return ReadUntil("\x01\x02", timeout); }

 private:
  UniqueFd read_;
  UniqueFd write_;
};

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/cpplaunch-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs `io` until `done()` holds or the timeout passes; returns done().
inline bool RunUntil(boost::asio::io_context& io, const std::function<bool()>& done,
                     std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  io.restart();
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.run_one_for(std::chrono::milliseconds(10));
  }
  return done();
}

// True when `pid` no longer runs: gone, or a zombie waiting for a reaper.
inline bool ProcessGone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren == std::string::npos || line.size() < paren + 3 || line[paren + 2] == 'Z' ||
         line[paren + 2] == 'X';
}

inline bool AllGone(const std::vector<pid_t>& pids, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (pid_t pid : pids) all = all && ProcessGone(pid);
    if (all) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

inline std::vector<pid_t> ReadPids(const std::string& path) {
  std::vector<pid_t> pids;
  std::ifstream in(path);
  pid_t pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

// Waits (bounded) until `path` lists at least `count` pids.
inline std::vector<pid_t> WaitForPids(const std::string& path, size_t count,
                                      std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<pid_t> pids = ReadPids(path);
  while (pids.size() < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pids = ReadPids(path);
  }
  return pids;
}

// Last-resort cleanup so a failing test leaves nothing running, then reaps what it can.
inline void KillAndReap(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids) {
    if (pid > 1) ::kill(pid, SIGKILL);
  }
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

}  // namespace cpplaunch::testing
