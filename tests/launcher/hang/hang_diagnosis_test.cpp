// HangDiagnosis: its states from a stall to the held teardown and the hang's report, with a fake
// worker group under a real supervisor and a job that records what it is told.

#include "launcher/hang/hang_diagnosis.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <thread>

#include "fake_worker_group.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

class RecordingJob final : public Job {
 public:
  const std::string& run_id() const override { return run_id_; }
  std::string store_addr() const override { return ""; }
  int store_port() const override { return 0; }
  std::unique_ptr<StoreServer> HostStore() override { return nullptr; }
  void Rendezvous(Ready, Ended) override {}
  void CancelRendezvous() override {}
  void OnWorkerExit(const WorkerExitEvent&) override {}
  void BeforeFailureTeardown(std::function<void()> proceed) override {
    ++teardowns;
    proceed();
  }
  void OnSignal(int) override {}
  void OnAgentFailure(const std::string&) override {}
  void OnHang(const std::string& notice) override { hangs.push_back(notice); }
  void Conclude(const AttemptResult&, Decided) override {}
  bool LingersForPeers() const override { return false; }
  void HangUp() override {}

  int teardowns = 0;
  std::vector<std::string> hangs;

 private:
  std::string run_id_ = "run";
};

struct Fixture {
  Fixture()
      : null_fd(open("/dev/null", O_WRONLY | O_CLOEXEC)),
        console(io, null_fd, null_fd, EnvMap{}),
        supervisor(group, SupervisorConfig{
                              .shutdown_timeout = 1500ms,
                              .max_restarts = 0,
                              .stop_signal = SIGTERM,
                              .before_failure_teardown =
                                  [this](std::function<void()> proceed) {
                                    if (!hang->HoldTeardown(proceed)) {
                                      job.BeforeFailureTeardown(std::move(proceed));
                                    }
                                  },
                              .on_failure_teardown = {},
                          }) {}
  ~Fixture() { close(null_fd); }

  void Start(std::optional<std::chrono::milliseconds> timeout) {
    hang = std::make_unique<HangDiagnosis>(io, timeout, console, supervisor, group, job,
                                           [] { return true; });
    supervisor.Run(Specs(2), 0, [this](const AttemptResult& r) { result = r; });
    hang->AttemptStarted();
  }
  static std::vector<ProcessSpec> Specs(int n) {
    std::vector<ProcessSpec> specs(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) specs[static_cast<std::size_t>(i)].id = i;
    return specs;
  }
  void Exit(int id, WorkerExit exit) {
    group.Exit(id, exit);
    hang->OnWorkerExit();
  }

  boost::asio::io_context io;
  int null_fd;
  AgentConsole console;
  FakeWorkerGroup group;
  RecordingJob job;
  Supervisor supervisor;
  std::unique_ptr<HangDiagnosis> hang;
  std::optional<AttemptResult> result;
};

TEST_CASE("HangDiagnosis stays idle without --hang-timeout and never holds a teardown",
          "[agent][hang_diagnosis]") {
  Fixture f;
  f.Start(std::nullopt);
  CHECK(std::holds_alternative<HangDiagnosis::Idle>(f.hang->state()));
  CHECK_FALSE(f.hang->OnRemoteStop());
  CHECK_FALSE(f.hang->HoldTeardown([] {}));
  CHECK_FALSE(f.hang->hung());
}

TEST_CASE("HangDiagnosis leaves another host's stop to the caller while its workers progress",
          "[agent][hang_diagnosis]") {
  Fixture f;
  f.Start(10s);
  CHECK(std::holds_alternative<HangDiagnosis::Watching>(f.hang->state()));
  CHECK_FALSE(f.hang->OnRemoteStop());  // not stalled for half the timeout yet
  f.hang->AttemptDone();
  CHECK(std::holds_alternative<HangDiagnosis::Idle>(f.hang->state()));
}

TEST_CASE("HangDiagnosis collects stacks, holds the failure teardown, then hands it to the job",
          "[agent][hang_diagnosis]") {
  Fixture f;
  f.Start(100ms);
  std::this_thread::sleep_for(60ms);  // stalled for more than half the timeout
  REQUIRE(f.hang->OnRemoteStop());
  CHECK(f.hang->hung());
  CHECK(std::holds_alternative<HangDiagnosis::CollectingStacks>(f.hang->state()));
  CHECK(f.group.signals == std::vector<int>{SIGABRT});

  // The first dump's death is a failure: its teardown waits for the other dump.
  f.Exit(0, WorkerExit::Signaled(SIGABRT));
  CHECK(std::holds_alternative<HangDiagnosis::TeardownHeld>(f.hang->state()));
  CHECK(f.job.teardowns == 0);
  CHECK(f.group.stops.empty());

  f.Exit(1, WorkerExit::Signaled(SIGABRT));
  f.io.poll();  // every worker is gone: the held teardown goes on
  CHECK(std::holds_alternative<HangDiagnosis::Hung>(f.hang->state()));
  CHECK(f.job.teardowns == 1);
  CHECK(f.job.hangs.empty());  // another host declared it

  FailureRecord record;
  record.local_rank = 0;
  const LogDir logs = LogDir::Create("/dev/null", "run");
  const auto reason = f.hang->Reason(record, logs, 0);
  REQUIRE(reason);
  CHECK(reason->find("another host") != std::string::npos);
}

// The repro: a worker that ignores SIGABRT answered no stack request, the grace ended
// in a stop request, and a single-host job ended "stopped" without using its restarts.
TEST_CASE("HangDiagnosis kills workers that ignore the stack request: the hang is a failure",
          "[agent][hang_diagnosis]") {
  Fixture f;
  f.Start(100ms);
  std::this_thread::sleep_for(60ms);
  REQUIRE(f.hang->OnRemoteStop());
  const auto deadline = std::chrono::steady_clock::now() + HangDiagnosis::kStackGrace + 2s;
  while (!std::holds_alternative<HangDiagnosis::Hung>(f.hang->state()) &&
         std::chrono::steady_clock::now() < deadline) {
    f.io.run_one_for(50ms);
  }
  REQUIRE(std::holds_alternative<HangDiagnosis::Hung>(f.hang->state()));
  // Nobody died of the SIGABRT within the grace: the teardown, as a failure of the attempt.
  CHECK(f.group.signals == std::vector<int>{SIGABRT});
  REQUIRE(f.group.stops.size() == 1);
  CHECK(f.group.stops[0].signo == SIGTERM);

  f.Exit(0, WorkerExit::Signaled(SIGTERM));
  f.Exit(1, WorkerExit::Signaled(SIGTERM));
  f.group.FinishStop();
  REQUIRE(f.result);
  CHECK(f.result->outcome == AttemptOutcome::kFailed);  // not kStopped; kRestart with restarts

  FailureRecord record;
  record.local_rank = 0;
  record.exit = WorkerExit::Signaled(SIGTERM);
  const LogDir logs = LogDir::Create("/dev/null", "run");
  const auto reason = f.hang->Reason(record, logs, 0);
  REQUIRE(reason);
  CHECK(reason->ends_with("; it did not answer the stack request (SIGABRT ignored or blocked?)"));
  CHECK_THAT(f.hang->Report({record}, logs, 0),
             Catch::Contains("rank 0: <no stack: it did not answer the stack request (SIGABRT "
                             "ignored or blocked?)>"));
}

}  // namespace
}  // namespace cpplaunch
