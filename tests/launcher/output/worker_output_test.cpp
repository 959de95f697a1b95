#include "launcher/output/worker_output.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

extern char** environ;

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Runs the loop until `done` holds or `timeout` passes; returns done().
template <typename Pred>
bool RunUntil(boost::asio::io_context& io, Pred done, std::chrono::milliseconds timeout = 20s) {
  const auto deadline = Clock::now() + timeout;
  while (!done() && Clock::now() < deadline) {
    io.restart();
    io.run_for(5ms);
  }
  return done();
}

// Collects everything written to a pipe: plays the terminal (or `| tee`) the agent writes to.
class PipeSink {
 public:
  explicit PipeSink(boost::asio::io_context& io) : reader_(io) {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    reader_.assign(fds[0]);
    write_fd_ = fds[1];
    Read();
  }
  ~PipeSink() { ::close(write_fd_); }
  int fd() const { return write_fd_; }
  const std::string& text() const { return text_; }

 private:
  void Read() {
    reader_.async_read_some(boost::asio::buffer(buffer_), [this](auto ec, std::size_t n) {
      text_.append(buffer_, n);
      if (!ec) Read();
    });
  }
  boost::asio::posix::stream_descriptor reader_;
  int write_fd_ = -1;
  char buffer_[65536];
  std::string text_;
};

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "worker_output_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::string ReadFile(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

// Starts argv in its own process group with fds 1/2 from `stdio`, like the real spawner.
pid_t Spawn(const std::vector<std::string>& argv, ChildStdio stdio) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdio.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdio.stdout_fd, 1);
  if (stdio.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdio.stderr_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  REQUIRE(rc == 0);
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

// Spawns the workers, waits for all of them, drains; returns how long the whole took.
std::chrono::milliseconds RunWorkers(boost::asio::io_context& io, WorkerOutput& output,
                                     const std::vector<std::vector<std::string>>& argvs,
                                     const std::vector<ChildStdio>& stdios) {
  const auto start = Clock::now();
  std::vector<pid_t> pids;
  for (std::size_t i = 0; i < argvs.size(); ++i) pids.push_back(Spawn(argvs[i], stdios[i]));
  output.Start();
  std::size_t exited = 0;
  REQUIRE(RunUntil(io, [&] {
    for (pid_t& pid : pids) {
      int status = 0;
      if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        ++exited;
      }
    }
    return exited == pids.size();
  }));
  bool drained = false;
  output.Drain(WorkerOutput::kDefaultDrainGrace, [&] { drained = true; });
  REQUIRE(RunUntil(io, [&] { return drained; }));
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

WorkerStreams Streams(int local_rank, StreamRoute out, StreamRoute err, const ScratchDir& dir) {
  WorkerStreams s;
  s.local_rank = local_rank;
  s.prefix = FormatLinePrefix(std::nullopt, "default", local_rank, local_rank);
  s.stdout_route = out;
  s.stderr_route = err;
  s.stdout_log = dir / (std::to_string(local_rank) + "-stdout.log");
  s.stderr_log = dir / (std::to_string(local_rank) + "-stderr.log");
  return s;
}

// One agent's output side: a scratch log directory, the loop, two pipes playing the console's
// stdout and stderr, their writers, and the WorkerOutput under test (destroyed first).
struct OutputRig {
  ScratchDir dir;
  boost::asio::io_context io;
  PipeSink out_sink{io}, err_sink{io};
  ConsoleWriter out{io, out_sink.fd()}, err{io, err_sink.fd()};
  WorkerOutput output{io, out, err};

  // Spawns the workers with these stdios, waits for all of them, drains (RunWorkers).
  std::chrono::milliseconds Run(const std::vector<std::vector<std::string>>& argvs,
                                const std::vector<ChildStdio>& stdios) {
    return RunWorkers(io, output, argvs, stdios);
  }

  // Drains with `grace`; true when the drain ended within `timeout`.
  bool Drained(std::chrono::milliseconds grace, std::chrono::milliseconds timeout = 20s) {
    bool drained = false;
    output.Drain(grace, [&] { drained = true; });
    return RunUntil(
        io, [&] { return drained; }, timeout);
  }

  // Lets the loop run a while, so that anything still under way reaches the sinks.
  void Settle() {
    RunUntil(
        io, [] { return false; }, 50ms);
  }
};

std::vector<std::string> Sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

struct IgnoreSigpipe {
  IgnoreSigpipe() { ::signal(SIGPIPE, SIG_IGN); }
} ignore_sigpipe;  // as the agent does: a vanished console reader must not kill the process

}  // namespace

TEST_CASE("ResolveStreamRoute follows torchrun's redirect, tee and filter rules",
          "[launcher][output]") {
  using R = StreamRoute;
  // redirect, tee, shown, files_enabled
  CHECK(ResolveStreamRoute(false, false, true, true) == R::kInherit);
  CHECK(ResolveStreamRoute(true, false, true, true) == R::kFile);
  CHECK(ResolveStreamRoute(false, true, true, true) == R::kTee);
  CHECK(ResolveStreamRoute(true, true, true, true) == R::kTee);
  CHECK(ResolveStreamRoute(false, false, false, true) == R::kDiscard);
  CHECK(ResolveStreamRoute(true, false, false, true) == R::kFile);
  CHECK(ResolveStreamRoute(false, true, false, true) == R::kFile);
  CHECK(ResolveStreamRoute(false, false, true, false) == R::kInherit);
  CHECK(ResolveStreamRoute(true, false, true, false) == R::kDiscard);
  CHECK(ResolveStreamRoute(false, true, true, false) == R::kTee);
  CHECK(ResolveStreamRoute(false, true, false, false) == R::kDiscard);
}

TEST_CASE_METHOD(OutputRig,
                 "WorkerOutput tee prefixes lines on the console and writes raw bytes to the log "
                 "file",
                 "[launcher][output][process]") {
  CHECK(out.asynchronous());
  const auto streams = Streams(3, StreamRoute::kTee, StreamRoute::kTee, dir);
  const ChildStdio stdio = output.Open(streams);
  CHECK(stdio.stdout_fd >= 0);
  CHECK(stdio.stderr_fd >= 0);
  CHECK((::fcntl(stdio.stdout_fd, F_GETFD) & FD_CLOEXEC) != 0);
  CHECK((::fcntl(stdio.stderr_fd, F_GETFD) & FD_CLOEXEC) != 0);
  Run({Sh("printf 'one\\ntwo\\n'; printf 'bad\\n' >&2; printf 'three'")}, {stdio});
  RunUntil(
      io, [&] { return out_sink.text().size() >= 47; }, 2s);
  CHECK(out_sink.text() == "[default3]:one\n[default3]:two\n[default3]:three\n");
  CHECK(err_sink.text() == "[default3]:bad\n");
  CHECK(ReadFile(streams.stdout_log) == "one\ntwo\nthree");
  CHECK(ReadFile(streams.stderr_log) == "bad\n");
}

TEST_CASE_METHOD(OutputRig,
                 "WorkerOutput redirect-only writes the files and nothing to the console",
                 "[launcher][output][process]") {
  const auto streams = Streams(0, StreamRoute::kFile, StreamRoute::kFile, dir);
  const ChildStdio stdio = output.Open(streams);
  Run({Sh("echo out; echo err >&2")}, {stdio});
  Settle();
  CHECK(out_sink.text().empty());
  CHECK(err_sink.text().empty());
  CHECK(ReadFile(streams.stdout_log) == "out\n");
  CHECK(ReadFile(streams.stderr_log) == "err\n");
  CHECK(output.bytes_read() == 0);
}

TEST_CASE_METHOD(OutputRig,
                 "WorkerOutput gives inherit as -1 and a hidden rank /dev/null or its file only",
                 "[launcher][output][process]") {
  const ChildStdio inherit =
      output.Open(Streams(0, StreamRoute::kInherit, StreamRoute::kInherit, dir));
  CHECK(inherit.stdout_fd == -1);
  CHECK(inherit.stderr_fd == -1);
  // Rank 1 is filtered out: stdout was tee'd (-> file only), stderr not redirected (-> /dev/null).
  const auto hidden = Streams(1, ResolveStreamRoute(false, true, false, true),
                              ResolveStreamRoute(false, false, false, true), dir);
  const ChildStdio stdio = output.Open(hidden);
  struct stat devnull {
  }, given{};
  REQUIRE(::stat("/dev/null", &devnull) == 0);
  REQUIRE(::fstat(stdio.stderr_fd, &given) == 0);
  CHECK(given.st_rdev == devnull.st_rdev);
  Run({Sh("echo visible-in-file; echo nowhere >&2")}, {stdio});
  Settle();
  CHECK(out_sink.text().empty());
  CHECK(err_sink.text().empty());
  CHECK(ReadFile(hidden.stdout_log) == "visible-in-file\n");
  CHECK_FALSE(fs::exists(hidden.stderr_log));
}

// Issue 23: --local-ranks-filter hiding a rank left its empty stderr.log (kept for a failure's
// traceback) in every attempt's directory, and the default log directory in /tmp with it.
TEST_CASE_METHOD(OutputRig,
                 "WorkerOutput removes a hidden rank's stderr log at the drain when nothing was "
                 "written",
                 "[launcher][output][process]") {
  auto quiet = Streams(0, StreamRoute::kDiscard, StreamRoute::kFile, dir);
  quiet.stderr_log_for_failures = true;
  auto talker = Streams(1, StreamRoute::kDiscard, StreamRoute::kFile, dir);
  talker.stderr_log_for_failures = true;
  auto asked = Streams(2, StreamRoute::kDiscard, StreamRoute::kFile, dir);  // -r: the user's
  const ChildStdio a = output.Open(quiet);
  const ChildStdio b = output.Open(talker);
  const ChildStdio c = output.Open(asked);
  CHECK(fs::exists(quiet.stderr_log));  // the worker gets it from the start
  Run({Sh("echo out"), Sh("echo traceback >&2"), Sh("true")}, {a, b, c});
  CHECK_FALSE(fs::exists(quiet.stderr_log));
  CHECK(ReadFile(talker.stderr_log) == "traceback\n");
  CHECK(fs::exists(asked.stderr_log));
}

TEST_CASE_METHOD(OutputRig, "WorkerOutput writes a crashing worker's partial last line",
                 "[launcher][output][process]") {
  const auto streams = Streams(1, StreamRoute::kTee, StreamRoute::kInherit, dir);
  const ChildStdio stdio = output.Open(streams);
  Run({{CPPLAUNCH_OUTPUT_WRITER, "w", "2", "14", "out", "no newline"}}, {stdio});
  RunUntil(
      io, [&] { return out_sink.text().size() >= 63; }, 2s);
  CHECK(out_sink.text() ==
        "[default1]:w 000000000 x\n[default1]:w 000000001 x\n[default1]:no newline\n");
  CHECK(ReadFile(streams.stdout_log) == "w 000000000 x\nw 000000001 x\nno newline");
}

TEST_CASE_METHOD(OutputRig, "WorkerOutput never interleaves two workers' lines mid-line",
                 "[launcher][output][process]") {
  constexpr int kLines = 3000;
  std::vector<ChildStdio> stdios;
  std::vector<std::vector<std::string>> argvs;
  for (int lr = 0; lr < 2; ++lr) {
    stdios.push_back(output.Open(Streams(lr, StreamRoute::kTee, StreamRoute::kTee, dir)));
    // 5000-byte lines: longer than PIPE_BUF and than many reads, so they arrive in pieces.
    argvs.push_back({CPPLAUNCH_OUTPUT_WRITER, "t" + std::to_string(lr), std::to_string(kLines),
                     "5000", "both"});
  }
  Run(argvs, stdios);
  const std::size_t expected_size = 2 * kLines * (5000 + 11);
  RunUntil(
      io, [&] { return out_sink.text().size() >= expected_size; }, 5s);
  for (const std::string* text : {&out_sink.text(), &err_sink.text()}) {
    REQUIRE(text->size() == expected_size);
    std::map<std::string, int> next;
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
      REQUIRE(line.size() == 5010);
      const std::string tag = line.substr(11, 2);
      REQUIRE(line.substr(0, 11) == "[default" + tag.substr(1) + "]:");
      char seq[16];
      std::snprintf(seq, sizeof(seq), " %09d ", next[tag]++);
      REQUIRE(line.substr(13, 11) == seq);
      REQUIRE(line.find_first_not_of('x', 24) == std::string::npos);
    }
    CHECK(next["t0"] == kLines);
    CHECK(next["t1"] == kLines);
  }
}

TEST_CASE("WorkerOutput copies heavy output intact and fast", "[launcher][output][process]") {
  ScratchDir dir;
  boost::asio::io_context io;
  // The console is a regular file here, as in `cpplaunch ... > run.log`.
  const int console_fd =
      ::open((dir / "console.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(console_fd >= 0);
  PipeSink err_sink(io);
  {
    ConsoleWriter out(io, console_fd), err(io, err_sink.fd());
    CHECK_FALSE(out.asynchronous());
    WorkerOutput output(io, out, err);
    const auto streams = Streams(0, StreamRoute::kTee, StreamRoute::kInherit, dir);
    const ChildStdio stdio = output.Open(streams);
    constexpr long kLines = 500000;  // 50 MB of 100-byte lines
    const auto took = RunWorkers(
        io, output, {{CPPLAUNCH_OUTPUT_WRITER, "h", std::to_string(kLines), "100"}}, {stdio});
    CHECK(fs::file_size(streams.stdout_log) == kLines * 100);
    CHECK(fs::file_size(dir / "console.txt") == kLines * (100 + 11));
    CHECK(output.bytes_read() == kLines * 100);
    CHECK(took < 20s);
    const std::string console = ReadFile(dir / "console.txt");
    CHECK(console.substr(0, 24) == "[default0]:h 000000000 x");
    CHECK(console.substr(console.size() - 111, 24) == "[default0]:h 000499999 x");
  }
  ::close(console_fd);
}

TEST_CASE_METHOD(OutputRig, "WorkerOutput Drain is bounded when a grandchild keeps the pipe open",
                 "[launcher][output][process]") {
  // No log files (--log-dir /dev/null): a console-only tee reads pipes.
  WorkerStreams streams = Streams(2, StreamRoute::kTee, StreamRoute::kTee, dir);
  streams.stdout_log.clear();
  streams.stderr_log.clear();
  const ChildStdio stdio = output.Open(streams);
  struct stat given {};
  REQUIRE(::fstat(stdio.stdout_fd, &given) == 0);
  CHECK(S_ISFIFO(given.st_mode));
  const pid_t pid = Spawn(Sh("sleep 30 & echo started; printf tail"), stdio);
  output.Start();
  WaitExit(pid);
  const auto start = Clock::now();
  REQUIRE(Drained(300ms, 5s));
  const auto took = Clock::now() - start;
  ::kill(-pid, SIGKILL);  // the sleeper is still in the worker's process group
  CHECK(took >= 250ms);
  CHECK(took < 2s);
  RunUntil(
      io, [&] { return out_sink.text().size() >= 32; }, 1s);
  CHECK(out_sink.text() == "[default2]:started\n[default2]:tail\n");
  CHECK_FALSE(fs::exists(dir / "2-stdout.log"));
}

TEST_CASE_METHOD(
    OutputRig, "WorkerOutput tails a tee'd log file: lines reach the console while the worker runs",
    "[launcher][output][process]") {
  const auto streams = Streams(4, StreamRoute::kTee, StreamRoute::kInherit, dir);
  const ChildStdio stdio = output.Open(streams);
  // The worker writes its log file itself, appending (as with --redirects).
  struct stat given {};
  REQUIRE(::fstat(stdio.stdout_fd, &given) == 0);
  CHECK(S_ISREG(given.st_mode));
  CHECK((::fcntl(stdio.stdout_fd, F_GETFL) & O_APPEND) != 0);
  // A grandchild keeps the file open and writes after the worker exits.
  const pid_t pid = Spawn(Sh("echo first; (sleep 1.5; echo late) & sleep 1; printf second"), stdio);
  output.Start();
  // Woken by the write, not by the worker's exit: the first line arrives while it sleeps.
  CHECK(RunUntil(
      io, [&] { return out_sink.text() == "[default4]:first\n"; }, 5s));
  int status = 0;
  CHECK(::waitpid(pid, &status, WNOHANG) == 0);
  WaitExit(pid);
  const auto start = Clock::now();
  REQUIRE(Drained(WorkerOutput::kDefaultDrainGrace, 5s));
  // A file has no EOF to wait for: the drain reads to the current end and is done.
  CHECK(Clock::now() - start < 200ms);
  CHECK(out_sink.text() == "[default4]:first\n[default4]:second\n");
  RunUntil(
      io, [&] { return ReadFile(streams.stdout_log).find("late") != std::string::npos; }, 5s);
  Settle();
  // The grandchild's late line went to the file only.
  CHECK(ReadFile(streams.stdout_log) == "first\nsecondlate\n");
  CHECK(out_sink.text() == "[default4]:first\n[default4]:second\n");
  ::kill(-pid, SIGKILL);
}

TEST_CASE_METHOD(OutputRig,
                 "WorkerOutput reads every tailed file after the kernel's watch queue overflowed",
                 "[launcher][output][process]") {
  const ChildStdio a = output.Open(Streams(0, StreamRoute::kTee, StreamRoute::kTee, dir));
  const ChildStdio b = output.Open(Streams(1, StreamRoute::kTee, StreamRoute::kInherit, dir));
  // Rank 0 alternates stdout and stderr writes (events that cannot merge) more often than the
  // kernel queues events (fs.inotify.max_queued_events, 16384 by default) while the loop does
  // not run; rank 1's one line comes after, so its event is lost in the overflow.
  const pid_t flood =
      Spawn(Sh("i=0; while [ $i -lt 10000 ]; do echo o; echo e >&2; i=$((i+1)); done"), a);
  const fs::path go = dir / "go";
  const pid_t late = Spawn(
      Sh("while [ ! -e '" + go.string() + "' ]; do sleep 0.01; done; echo after-the-overflow"), b);
  output.Start();
  WaitExit(flood);
  std::ofstream(go).put('\n');
  WaitExit(late);
  // Not drained: the overflow alone must send the loop to every tailed file.
  CHECK(RunUntil(
      io,
      [&] { return out_sink.text().find("[default1]:after-the-overflow\n") != std::string::npos; },
      5s));
  REQUIRE(Drained(WorkerOutput::kDefaultDrainGrace));
  RunUntil(
      io, [&] { return err_sink.text().size() >= 10000 * 13; }, 2s);
  CHECK(err_sink.text().size() == 10000 * 13);
}

TEST_CASE_METHOD(
    OutputRig, "WorkerOutput duplicates matching tee'd lines of every worker to one filtered file",
    "[launcher][output][process][filters]") {
  output.DuplicateMatchingLines(false, {"loss"}, dir / "filtered_stdout.log");
  output.DuplicateMatchingLines(true, {}, dir / "filtered_stderr.log");  // none: no file
  const ChildStdio a = output.Open(Streams(0, StreamRoute::kTee, StreamRoute::kTee, dir));
  const ChildStdio b = output.Open(Streams(1, StreamRoute::kTee, StreamRoute::kFile, dir));
  RunWorkers(io, output,
             {Sh("printf 'loss 1\\nskip\\n'; printf 'loss on stderr\\n' >&2; printf 'loss 2'"),
              Sh("printf 'nothing\\nloss 9\\n'")},
             {a, b});
  const std::string filtered = ReadFile(dir / "filtered_stdout.log");
  CHECK(filtered.find("[default0]:loss 1\n") != std::string::npos);
  CHECK(filtered.find("[default0]:loss 2\n") != std::string::npos);  // partial last line
  CHECK(filtered.find("[default1]:loss 9\n") != std::string::npos);
  CHECK(filtered.size() == 3 * 18);
  CHECK_FALSE(fs::exists(dir / "filtered_stderr.log"));
  // The console and the rank's own log are untouched by the filter.
  CHECK(ReadFile(dir / "0-stdout.log") == "loss 1\nskip\nloss 2");
}

}  // namespace cpplaunch
