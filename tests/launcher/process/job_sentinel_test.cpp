// Process tests of JobSentinel: nothing of a job outlives its agent, and stale job cgroups
// are removed. The agent is a forked child running a real PosixWorkerGroup of test_workers.

#include "launcher/process/job_sentinel.h"

#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "launcher/process/posix_worker_group.h"
#include "process_test_util.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using testing::Pipe;
using testing::TempDir;
using testing::TestWorkerSpec;

// Runs in a forked child that plays the agent: sentinel, group, workers with descendants.
// Writes every descendant's pid (and the cgroup path) to `pids_file`, then "go" on `ready_fd`,
// then runs its loop until the test SIGKILLs it. `one_cpu`: the agent may run on one CPU only,
// so it makes the job cgroup itself instead of the sentinel (JobSentinel::Start).
[[noreturn]] void FakeAgent(const std::string& pids_file, int ready_fd, bool use_cgroup,
                            int daemons, bool one_cpu) {
  ::alarm(30);  // never outlive a broken test
  if (one_cpu) {
    cpu_set_t here;
    CPU_ZERO(&here);
    CPU_SET(::sched_getcpu(), &here);
    REQUIRE(::sched_setaffinity(0, sizeof(here), &here) == 0);
  }
  std::unique_ptr<JobSentinel> sentinel = JobSentinel::Start(JobSentinelOptions{use_cgroup});
  boost::asio::io_context io;
  auto group = MakePosixWorkerGroup(io, PosixWorkerGroupOptions{sentinel.get(), 5s, true});
  Pipe out;
  std::string worker_pids = pids_file + ".workers";
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 2; ++i) {
    specs.push_back(
        TestWorkerSpec(i,
                       {"--pid-file", pids_file, "--children", "2", "--children-ignore-term",
                        "--daemons", std::to_string(daemons), "--ready", "--sleep", "60000"},
                       out.write_fd()));
  }
  group->Start(std::move(specs));
  out.CloseWrite();
  out.ReadUntil("ready\nready\n", 5s);
  std::string note = sentinel->cgroup_path() + "\n";
  (void)WriteSome(ready_fd, note);
  io.run();
  ::_exit(0);
}

TEST_CASE("Nothing outlives an agent killed with SIGKILL", "[launcher][process][sentinel]") {
  const int variant = GENERATE(0, 1, 2);
  const bool use_cgroup = variant != 1;
  const bool one_cpu = variant == 2;
  INFO("use_cgroup=" << use_cgroup << " one_cpu=" << one_cpu);
  TempDir tmp;
  std::string pids_file = tmp.File("pids");
  Pipe ready;
  // Without a cgroup, a daemonized descendant escapes an agent SIGKILL (documented limit).
  int daemons = use_cgroup ? 1 : 0;
  pid_t agent = ::fork();
  REQUIRE(agent >= 0);
  if (agent == 0) FakeAgent(pids_file, ready.write_fd(), use_cgroup, daemons, one_cpu);
  ready.CloseWrite();
  std::string cgroup = ready.ReadUntil("\n", 10s);
  REQUIRE(!cgroup.empty());
  cgroup.pop_back();
  if (use_cgroup && cgroup.empty()) WARN("no writable cgroup v2 here: testing process groups only");
  std::vector<pid_t> pids = testing::ReadPids(pids_file);
  REQUIRE(pids.size() == static_cast<size_t>(2 * (2 + daemons)));
  // The workers themselves: the children of the agent other than the sentinel are in
  // /proc/<agent>/task/*/children; simpler, take the parents of the grandchildren.
  for (pid_t pid : testing::ReadPids(pids_file)) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    pid_t ppid = std::atoi(line.substr(line.rfind(')') + 4).c_str());
    if (ppid != agent && ppid > 1) pids.push_back(ppid);
  }
  REQUIRE(::kill(agent, SIGKILL) == 0);
  REQUIRE(::waitpid(agent, nullptr, 0) == agent);
  auto start = std::chrono::steady_clock::now();
  bool gone = testing::AllGone(pids, 1s);
  auto elapsed = std::chrono::steady_clock::now() - start;
  testing::Measured("agent SIGKILLed (cgroup=" + std::to_string(!cgroup.empty()) + "): all " +
                    std::to_string(pids.size()) + " workers and descendants gone after " +
                    std::to_string(testing::Ms(elapsed)) + " ms");
  CHECK(gone);
  if (!cgroup.empty()) {
    struct stat st {};
    bool removed = false;
    for (int i = 0; i < 100 && !removed; ++i) {
      removed = ::stat(cgroup.c_str(), &st) != 0;
      if (!removed) std::this_thread::sleep_for(10ms);
    }
    CHECK(removed);
  }
  testing::KillAndReap(pids);
}

TEST_CASE("JobSentinel removes job cgroups of agents that are gone", "[launcher][sentinel]") {
  std::unique_ptr<JobSentinel> probe = JobSentinel::Start();
  if (!probe->has_cgroup()) {
    WARN("no writable cgroup v2 here: nothing to test");
    return;
  }
  std::string parent = probe->cgroup_path().substr(0, probe->cgroup_path().rfind('/'));
  probe.reset();
  pid_t dead = ::fork();  // a pid that surely belongs to no agent any more
  if (dead == 0) ::_exit(0);
  REQUIRE(::waitpid(dead, nullptr, 0) == dead);
  std::string stale = parent + "/cpplaunch-" + std::to_string(dead) + "-0";
  REQUIRE(::mkdir(stale.c_str(), 0755) == 0);
  std::unique_ptr<JobSentinel> sentinel = JobSentinel::Start();
  // The sentinel sweeps stale cgroups before it makes the job's: done once the job's is known.
  REQUIRE(sentinel->has_cgroup());
  struct stat st {};
  CHECK(::stat(stale.c_str(), &st) != 0);
  ::rmdir(stale.c_str());
  std::string own = sentinel->cgroup_path();
  sentinel.reset();
  CHECK(::stat(own.c_str(), &st) != 0);  // a clean shutdown removes the job's own cgroup
}

// The state letter of /proc/<pid>/stat ('Z' once a child has exited and awaits its reaping).
char ProcessState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

TEST_CASE("JobSentinel::Quit lets the sentinel go at once; the destructor only reaps it",
          "[launcher][process][sentinel]") {
  std::unique_ptr<JobSentinel> sentinel = JobSentinel::Start();
  const pid_t pid = sentinel->pid();
  const std::string cgroup = sentinel->cgroup_path();
  // A group still watched at the end (an abandoned worker) is SIGKILLed on the way out.
  const pid_t watched = ::fork();
  REQUIRE(watched >= 0);
  if (watched == 0) {
    ::setsid();
    ::pause();
    ::_exit(0);
  }
  REQUIRE(sentinel->Watch(watched));
  sentinel->Quit();
  sentinel->Quit();  // idempotent
  CHECK_FALSE(sentinel->Watch(::getpid()));
  bool exited = false;
  for (int i = 0; i < 200 && !exited; ++i) {
    exited = ProcessState(pid) == 'Z';
    if (!exited) std::this_thread::sleep_for(5ms);
  }
  CHECK(exited);  // while its JobSentinel still exists
  if (!cgroup.empty()) {
    struct stat st {};
    CHECK(::stat(cgroup.c_str(), &st) != 0);  // removed by the sentinel on its way out
  }
  auto start = std::chrono::steady_clock::now();
  sentinel.reset();
  CHECK(std::chrono::steady_clock::now() - start < 500ms);
  CHECK(::kill(pid, 0) != 0);  // reaped
  int status = 0;
  REQUIRE(::waitpid(watched, &status, 0) == watched);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
}

}  // namespace
}  // namespace cpplaunch
