// Process tests of PosixWorkerGroup with real test_worker processes.

#include "launcher/process/posix_worker_group.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <map>

#include "launcher/process/job_sentinel.h"
#include "launcher/process/posix_sys.h"
#include "process_test_util.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using testing::Pipe;
using testing::RunUntil;
using testing::TempDir;
using testing::TestWorker;
using testing::TestWorkerSpec;

// A group plus the exits it reported, keyed by id.
struct Harness {
  explicit Harness(PosixWorkerGroupOptions options = {})
      : group(MakePosixWorkerGroup(io, options)) {
    group->SetExitCallback([this](const WorkerExitEvent& e) { exits[e.id] = e; });
  }
  bool WaitExits(size_t n, std::chrono::milliseconds timeout = 5s) {
    return RunUntil(
        io, [&] { return exits.size() >= n; }, timeout);
  }
  std::optional<StopResult> Stop(int signo, std::chrono::milliseconds grace,
                                 std::chrono::milliseconds timeout = 5s) {
    std::optional<StopResult> result;
    group->StopAll(signo, grace, [&](const StopResult& r) { result = r; });
    RunUntil(
        io, [&] { return result.has_value(); }, timeout);
    return result;
  }
  boost::asio::io_context io;
  std::unique_ptr<WorkerGroup> group;
  std::map<int, WorkerExitEvent> exits;
};

TEST_CASE("PosixWorkerGroup reports exit codes and deaths by signal", "[launcher][process]") {
  bool use_pidfd = GENERATE(true, false);
  INFO("use_pidfd=" << use_pidfd);
  Harness h(PosixWorkerGroupOptions{nullptr, 5s, use_pidfd});
  std::vector<ProcessSpec> specs;
  specs.push_back(TestWorkerSpec(0, {"--exit", "0"}));
  specs.push_back(TestWorkerSpec(1, {"--exit", "3"}));
  specs.push_back(TestWorkerSpec(2, {"--die", "SEGV"}));
  specs.push_back(TestWorkerSpec(3, {"--sleep", "30", "--die", "TERM"}));
  h.group->Start(std::move(specs));
  CHECK(h.group->running() == 4);
  REQUIRE(h.WaitExits(4));
  CHECK(h.exits[0].exit == WorkerExit::Exited(0));
  CHECK(h.exits[1].exit == WorkerExit::Exited(3));
  CHECK(h.exits[2].exit == WorkerExit::Signaled(SIGSEGV));
  CHECK(h.exits[3].exit == WorkerExit::Signaled(SIGTERM));
  CHECK(h.exits[1].pid > 0);
  CHECK(h.group->running() == 0);
  CHECK(h.Stop(SIGTERM, 1s).has_value());
}

TEST_CASE("PosixWorkerGroup sees an exit as an event, not at a polling tick",
          "[launcher][process]") {
  bool use_pidfd = GENERATE(true, false);
  INFO("use_pidfd=" << use_pidfd);
  Harness h(PosixWorkerGroupOptions{nullptr, 5s, use_pidfd});
  auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point seen;
  h.group->SetExitCallback([&](const WorkerExitEvent& e) {
    seen = std::chrono::steady_clock::now();
    h.exits[e.id] = e;
  });
  h.group->Start({TestWorkerSpec(0, {"--sleep", "100", "--exit", "0"})});
  REQUIRE(h.WaitExits(1));
  auto latency = seen - start - 100ms;
  testing::Measured("exit seen " + std::to_string(testing::Ms(latency)) +
                    " ms after the worker's 100 ms sleep (pidfd=" + std::to_string(use_pidfd) +
                    ")");
  // The group has no tick: an exit wakes it (pidfd or SIGCHLD). The figure itself is for the
  // benchmarks (it is 1-5 ms plain, 65 ms under ASan with busy loops on every core); the bound
  // only catches an exit found by polling or by the 5 s kill wait instead of as an event.
  CHECK(latency < 1s);
}

TEST_CASE("PosixWorkerGroup launches 8 workers that exit at once quickly", "[launcher][process]") {
  Harness h;
  auto start = std::chrono::steady_clock::now();
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 8; ++i) specs.push_back(TestWorkerSpec(i, {"--exit", "0"}));
  h.group->Start(std::move(specs));
  auto started = std::chrono::steady_clock::now();
  REQUIRE(h.WaitExits(8));
  REQUIRE(h.Stop(SIGTERM, 1s).has_value());
  auto done = std::chrono::steady_clock::now();
  testing::Measured("8 workers: Start() " + std::to_string(testing::Ms(started - start)) +
                    " ms, all reaped and swept " + std::to_string(testing::Ms(done - start)) +
                    " ms");
  // The figure is for bench/ (about 10 ms plain). The bound only catches an exit found by
  // polling or by the 5 s kill wait: 562 ms was measured under ASan with the busy loops on a
  // machine loaded to 10 by parallel builds, so 500 ms was a timing test, not that guard.
  CHECK(done - start < 2s);
}

TEST_CASE("StopAll sends the signal, then SIGKILL to a worker that ignores it",
          "[launcher][process]") {
  Harness h;
  Pipe out;
  h.group->Start(
      {TestWorkerSpec(0, {"--ignore-term", "--ready", "--sleep", "60000"}, out.write_fd()),
       TestWorkerSpec(1, {"--ready", "--sleep", "60000"}, out.write_fd())});
  out.CloseWrite();
  std::string ready = out.ReadUntil("ready\nready\n", 5s);
  REQUIRE(ready == "ready\nready\n");
  auto start = std::chrono::steady_clock::now();
  std::optional<StopResult> stop = h.Stop(SIGTERM, 200ms);
  auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE(stop.has_value());
  CHECK(stop->unreaped.empty());
  CHECK(h.exits[1].exit == WorkerExit::Signaled(SIGTERM));
  CHECK(h.exits[0].exit == WorkerExit::Signaled(SIGKILL));
  CHECK(elapsed >= 200ms);
  CHECK(elapsed < 1s);
}

TEST_CASE("StopAll finishes at once when every worker honours the signal", "[launcher][process]") {
  Harness h;
  Pipe out;
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 4; ++i)
    specs.push_back(TestWorkerSpec(i, {"--ready", "--sleep", "60000"}, out.write_fd()));
  h.group->Start(std::move(specs));
  out.CloseWrite();
  REQUIRE(out.ReadUntil("ready\nready\nready\nready\n", 5s).size() == 24);
  auto start = std::chrono::steady_clock::now();
  REQUIRE(h.Stop(SIGTERM, 10s).has_value());
  auto elapsed = std::chrono::steady_clock::now() - start;
  testing::Measured(
      "teardown of 4 workers honouring SIGTERM: " + std::to_string(testing::Ms(elapsed)) + " ms");
  CHECK(elapsed < 200ms);  // not the 10 s grace
  for (int i = 0; i < 4; ++i) CHECK(h.exits[i].exit == WorkerExit::Signaled(SIGTERM));
}

TEST_CASE("Signal reaches the worker's process group", "[launcher][process]") {
  Harness h;
  Pipe out;
  h.group->Start(
      {TestWorkerSpec(0, {"--trap-term", "7", "--ready", "--sleep", "60000"}, out.write_fd())});
  out.CloseWrite();
  REQUIRE(out.ReadUntil("ready\n", 5s) == "ready\n");
  h.group->Signal(SIGTERM);
  REQUIRE(h.WaitExits(1));
  CHECK(h.exits[0].exit == WorkerExit::Exited(7));
  CHECK(out.ReadAll(1s) == "trapped SIGTERM\n");
}

TEST_CASE("Teardown kills grandchildren, even those ignoring SIGTERM or daemonized",
          "[launcher][process]") {
  bool with_sentinel = GENERATE(false, true);
  INFO("with_sentinel=" << with_sentinel);
  TempDir tmp;
  std::string pids_file = tmp.File("pids");
  std::unique_ptr<JobSentinel> sentinel;
  if (with_sentinel) sentinel = JobSentinel::Start();
  Harness h(PosixWorkerGroupOptions{sentinel.get(), 5s, true});
  Pipe out;
  h.group->Start(
      {TestWorkerSpec(0,
                      {"--pid-file", pids_file, "--children", "2", "--children-ignore-term",
                       "--children", "1", "--daemons", "1", "--ready", "--sleep", "60000"},
                      out.write_fd()),
       // Exits at once, leaving its child and a daemon behind.
       TestWorkerSpec(
           1,
           {"--pid-file", pids_file, "--children", "1", "--daemons", "1", "--ready", "--exit", "0"},
           out.write_fd())});
  out.CloseWrite();
  REQUIRE(out.ReadUntil("ready\nready\n", 5s).size() == 12);
  std::vector<pid_t> pids = testing::WaitForPids(pids_file, 6, 5s);
  REQUIRE(pids.size() == 6);
  REQUIRE(h.WaitExits(1));  // worker 1 exited; its descendants are adopted by us
  auto start = std::chrono::steady_clock::now();
  std::optional<StopResult> stop = h.Stop(SIGTERM, 300ms);
  REQUIRE(stop.has_value());
  bool gone = testing::AllGone(pids, 1s);
  testing::Measured("descendants gone " +
                    std::to_string(testing::Ms(std::chrono::steady_clock::now() - start)) +
                    " ms after StopAll began");
  CHECK(gone);
  RunUntil(
      h.io, [] { return false; }, 50ms);  // reap adopted zombies
  testing::KillAndReap(pids);
}

TEST_CASE("No agent descriptor leaks into a worker", "[launcher][process]") {
  // Deliberately leaky parent: a listening socket and a pipe without close-on-exec, plus a
  // close-on-exec pipe and the worker's own stdout pipe.
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM, 0));
  REQUIRE(listener.valid());
  REQUIRE(::listen(listener.get(), 1) == 0);
  Pipe leaky(false);
  Pipe cloexec(true);
  Pipe out;
  Pipe err;
  std::unique_ptr<JobSentinel> sentinel = JobSentinel::Start();
  Harness h(PosixWorkerGroupOptions{sentinel.get(), 5s, true});
  ProcessSpec spec = TestWorkerSpec(0, {"--check-fds", "--stdout-lines", "1"}, out.write_fd());
  spec.stderr_fd = err.write_fd();
  h.group->Start({spec});
  out.CloseWrite();
  err.CloseWrite();
  REQUIRE(h.WaitExits(1));
  INFO(err.ReadAll(1s));
  CHECK(h.exits[0].exit == WorkerExit::Exited(0));
  CHECK(out.ReadAll(1s) == "out line 0\n");
}

TEST_CASE("A program that cannot be executed exits 127 or 126 with a clear message",
          "[launcher][process]") {
  TempDir tmp;
  std::string not_executable = tmp.File("script.sh");
  std::FILE* f = std::fopen(not_executable.c_str(), "w");
  std::fputs("#!/bin/sh\nexit 0\n", f);
  std::fclose(f);
  ::chmod(not_executable.c_str(), 0644);

  // Capture the agent's stderr, where the child reports the failure.
  Pipe err;
  UniqueFd saved(::dup(2));
  ::dup2(err.write_fd(), 2);
  Harness h;
  ProcessSpec missing = TestWorkerSpec(0, {});
  missing.argv = {"/nonexistent/program", "arg"};
  ProcessSpec not_on_path = TestWorkerSpec(1, {});
  not_on_path.argv = {"cpplaunch-no-such-command"};
  ProcessSpec denied = TestWorkerSpec(2, {});
  denied.argv = {not_executable};
  ProcessSpec bad_cwd = TestWorkerSpec(3, {"--exit", "0"});
  bad_cwd.cwd = "/nonexistent-dir";
  ProcessSpec on_path = TestWorkerSpec(4, {});
  on_path.argv = {"true"};
  h.group->Start({missing, not_on_path, denied, bad_cwd, on_path});
  ::dup2(saved.get(), 2);
  saved.reset();
  err.CloseWrite();
  REQUIRE(h.WaitExits(5));
  std::string messages = err.ReadAll(1s);
  INFO(messages);
  CHECK(h.exits[0].exit == WorkerExit::Exited(127));
  CHECK(h.exits[1].exit == WorkerExit::Exited(127));
  CHECK(h.exits[2].exit == WorkerExit::Exited(126));
  CHECK(h.exits[3].exit == WorkerExit::Exited(126));
  CHECK(h.exits[4].exit == WorkerExit::Exited(0));
  CHECK(messages.find("cpplaunch: cannot execute '/nonexistent/program' (local rank 0): "
                      "No such file or directory") != std::string::npos);
  CHECK(messages.find("'cpplaunch-no-such-command' (local rank 1): No such file or directory") !=
        std::string::npos);
  CHECK(messages.find("(local rank 2): Permission denied") != std::string::npos);
  CHECK(messages.find("(local rank 3): cannot change directory: No such file or directory") !=
        std::string::npos);
}

TEST_CASE("A worker gets exactly the given environment and working directory",
          "[launcher][process]") {
  TempDir tmp;
  Harness h;
  Pipe out;
  ProcessSpec spec = TestWorkerSpec(0, {"--print-env", "--print-cwd"}, out.write_fd());
  spec.env = {"A=1", "LOCAL_RANK=0"};
  spec.cwd = tmp.path();
  h.group->Start({spec});
  out.CloseWrite();
  REQUIRE(h.WaitExits(1));
  CHECK(out.ReadAll(1s) == "A=1\nLOCAL_RANK=0\n" + tmp.path() + "\n");
}

TEST_CASE("A worker runs on the CPUs its spec names (--numa-binding), or fails with 126",
          "[launcher][process]") {
  const std::vector<int> agent_cpus = posix::CurrentCpuAffinity();
  REQUIRE_FALSE(agent_cpus.empty());
  const int cpu = agent_cpus.back();
  Harness h;
  Pipe out, err;
  ProcessSpec bound;
  bound.id = 0;
  bound.argv = {"/bin/grep", "Cpus_allowed_list", "/proc/self/status"};
  bound.stdout_fd = out.write_fd();
  bound.cpus = {cpu};
  ProcessSpec refused = bound;
  refused.id = 1;
  refused.stdout_fd = -1;
  refused.cpus = {4095};  // no such CPU: the kernel refuses the set
  // The child reports on the agent's stderr: capture it.
  UniqueFd saved(::dup(2));
  ::dup2(err.write_fd(), 2);
  h.group->Start({bound, refused});
  ::dup2(saved.get(), 2);
  saved.reset();
  out.CloseWrite();
  err.CloseWrite();
  REQUIRE(h.WaitExits(2));
  CHECK(out.ReadAll(1s) == "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
  CHECK(h.exits[0].exit == WorkerExit::Exited(0));
  CHECK(h.exits[1].exit == WorkerExit::Exited(126));
  const std::string message = err.ReadAll(1s);
  INFO(message);
  CHECK(message.find("(local rank 1): cannot bind to the --numa-binding CPUs: Invalid "
                     "argument") != std::string::npos);
  // The agent itself keeps its affinity.
  CHECK(posix::CurrentCpuAffinity() == agent_cpus);
}

}  // namespace
}  // namespace cpplaunch
