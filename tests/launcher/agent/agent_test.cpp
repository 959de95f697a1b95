// The agent's story with a fake worker group on its real loop and a real store on 127.0.0.1
// (port 0): exit codes, restarts, signals and refusals, as the user sees them on the console.

#include "launcher/agent/agent.h"

#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/agent_run.h"
#include "parsed_options.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {
namespace {

LaunchOptions Options(std::vector<std::string> extra) {
  std::vector<std::string> argv = {"--nproc-per-node=2", "--master-addr=127.0.0.1",
                                   "--master-port=0", "--log-dir=/dev/null"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--no-python", "/bin/true"});
  return ParsedOptions(argv);
}

TEST_CASE("Agent: every worker succeeding exits 0", "[agent]") {
  Run run = RunAgent(Options({}), [](auto&, FakeWorkerGroup& group, const auto& specs) {
    ExitAll(group, specs, 0);
  });
  CHECK(run.code == 0);
  REQUIRE(run.starts == 1);
  REQUIRE(run.started[0].size() == 2);
  const ProcessSpec& rank1 = run.started[0][1];
  CHECK(rank1.argv == std::vector<std::string>{"/bin/true"});
  CHECK(HasEnv(rank1, "RANK=1"));
  CHECK(HasEnv(rank1, "WORLD_SIZE=2"));
  CHECK(HasEnv(rank1, "MASTER_ADDR=127.0.0.1"));
  CHECK(!HasEnv(rank1, "MASTER_PORT=0"));  // the store's bound port, not the requested 0
  CHECK(run.err.find("ChildFailedError") == std::string::npos);
}

TEST_CASE("Agent: a failure with a restart left restarts, then fails with the summary", "[agent]") {
  Run run =
      RunAgent(Options({"--max-restarts=1"}), [](auto&, FakeWorkerGroup& group, const auto& specs) {
        group.Exit(specs[0].id, WorkerExit::Exited(3));  // the rest is torn down
      });
  CHECK(run.code == 1);
  REQUIRE(run.starts == 2);
  CHECK(HasEnv(run.started[0][0], "TORCHELASTIC_RESTART_COUNT=0"));
  CHECK(HasEnv(run.started[1][0], "TORCHELASTIC_RESTART_COUNT=1"));
  CHECK(run.err.find("cpplaunch: worker group failed; restarting it (restart 1 of 1)") !=
        std::string::npos);
  CHECK(run.err.find("failed (exitcode: 3) local_rank: 0") != std::string::npos);
  CHECK(run.err.find("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:") !=
        std::string::npos);
  // The summary comes once, after the last attempt.
  CHECK(run.err.find("restarting it") < run.err.find("ChildFailedError"));
  CHECK(run.stops.at(0).signo == SIGTERM);
  // The sentinel is let go once, at the end, not between attempts.
  CHECK(run.job_over_calls == 1);
  CHECK(run.starts_at_job_over == 2);
}

TEST_CASE("Agent: --exit-code=worker returns the root cause's own code; default 1", "[agent]") {
  auto pytest_fails = [](auto&, FakeWorkerGroup& group, const auto& specs) {
    group.Exit(specs[1].id, WorkerExit::Exited(5));  // pytest: no tests collected
  };
  CHECK(RunAgent(Options({}), pytest_fails).code == 1);
  CHECK(RunAgent(Options({"--exit-code=worker"}), pytest_fails).code == 5);
  Run crashed = RunAgent(Options({"--exit-code=worker"}),
                         [](auto&, FakeWorkerGroup& group, const auto& specs) {
                           group.Exit(specs[0].id, WorkerExit::Dumped(SIGSEGV));
                         });
  CHECK(crashed.code == 128 + SIGSEGV);
  CHECK(crashed.err.find("  reason    : crashed with SIGSEGV (core dumped)\n") !=
        std::string::npos);
  // Success and a signal to the agent keep their codes.
  CHECK(RunAgent(Options({"--exit-code=worker"}), [](auto&, FakeWorkerGroup& group,
                                                     const auto& specs) {
          ExitAll(group, specs, 0);
        }).code == 0);
}

TEST_CASE("Agent: the summary says why in plain words", "[agent]") {
  Run run = RunAgent(Options({}), [](auto&, FakeWorkerGroup& group, const auto& specs) {
    group.Exit(specs[0].id, WorkerExit::Exited(127));
  });
  CHECK(run.err.find("  reason    : '/bin/true' is executable: the worker itself exited 127") !=
        std::string::npos);
  Run killed = RunAgent(Options({}), [](auto&, FakeWorkerGroup& group, const auto& specs) {
    group.Exit(specs[1].id, WorkerExit::Signaled(SIGKILL));
  });
  CHECK(killed.err.find("  reason    : killed by SIGKILL") != std::string::npos);
  CHECK(killed.err.find("not sent by cpplaunch") != std::string::npos);
}

TEST_CASE("Agent: the agent's own error file names the root cause", "[agent]") {
  const auto path = std::filesystem::temp_directory_path() / "cpplaunch_agent_test_error.json";
  std::filesystem::remove(path);
  Run run = RunAgent(
      Options({}),
      [](auto&, FakeWorkerGroup& group, const auto& specs) {
        group.Exit(specs[1].id, WorkerExit::Exited(7));
      },
      EnvMap{{"TORCHELASTIC_ERROR_FILE", path.string()}});
  CHECK(run.code == 1);
  CHECK(run.starts == 1);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("local_rank: 1") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("Agent: a signal while workers run is forwarded and exits 1", "[agent]") {
  Run run = RunAgent(Options({}), [](auto&, FakeWorkerGroup&, const auto&) {
    // SIGHUP is one of the handled signals and none Catch2 watches.
    ::raise(SIGHUP);
  });
  CHECK(run.code == 1);
  CHECK(run.starts == 1);
  REQUIRE(!run.stops.empty());
  CHECK(run.stops[0].signo == SIGHUP);
  CHECK(run.err.find("cpplaunch: received SIGHUP; forwarding it to the workers") !=
        std::string::npos);
  CHECK(run.err.find("cpplaunch: workers stopped after SIGHUP; exiting with code 1") !=
        std::string::npos);
}

// Exits every worker with 0 once the agent has passed a signal on to them.
void ExitAfterPassedOn(boost::asio::io_context& io, FakeWorkerGroup& group,
                       const std::vector<ProcessSpec>& specs) {
  if (group.signals.empty()) {
    boost::asio::post(io, [&io, &group, specs] { ExitAfterPassedOn(io, group, specs); });
    return;
  }
  ExitAll(group, specs, 0);
}

TEST_CASE("Agent: a --forward-signals signal reaches the workers and the job runs on", "[agent]") {
  Run run = RunAgent(Options({"--forward-signals=SIGUSR1"}),
                     [](boost::asio::io_context& io, FakeWorkerGroup& group, const auto& specs) {
                       ::raise(SIGUSR1);
                       ExitAfterPassedOn(io, group, specs);
                     });
  CHECK(run.code == 0);
  CHECK(run.starts == 1);
  CHECK(run.signals == std::vector<int>{SIGUSR1});
  CHECK(run.stops.size() == 1);  // only the final sweep after the workers' own exits
  CHECK(run.err.find("cpplaunch: received SIGUSR1; passed it to the workers "
                     "(--forward-signals); the job keeps running") != std::string::npos);
}

TEST_CASE("Agent: an unsupported option exits 2 before anything starts", "[agent]") {
  LaunchOptions options = Options({});
  options.event_log_handler = "syslog";
  Run run = RunAgent(options, [](auto&, FakeWorkerGroup&, const auto&) { FAIL("started"); });
  CHECK(run.code == 2);
  CHECK(run.starts == 0);
  CHECK(run.err.find("cpplaunch: error: --event-log-handler=syslog is not one of torchrun's "
                     "event handlers (null, console, dynamic_rendezvous)") == 0);
}

TEST_CASE("Agent: a chosen busy store port exits 1 naming it", "[agent]") {
  boost::asio::io_context other;
  StoreServerOptions busy;
  busy.bind_host = "127.0.0.1";
  StoreServer holder(other, busy);
  LaunchOptions options = Options({});
  options.master_port = holder.port();
  Run run = RunAgent(options, [](auto&, FakeWorkerGroup&, const auto&) { FAIL("started"); });
  CHECK(run.code == 1);
  CHECK(run.starts == 0);
  CHECK(run.err.find("cpplaunch: error: ") == 0);
  CHECK(run.err.find(std::to_string(holder.port())) != std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
