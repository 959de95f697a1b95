// The multi-host story through a real Agent: one agent of a c10d job with --nnodes=1:2 hosts the
// job's store on loopback and is, after the last call, a world of its own. Its workers are a
// fake group, so the round's job channel, the exit barrier, the job-wide restart decision and
// the linger of the store's host are exercised against a real store without processes.

#include "launcher/agent/multi_host_job.h"

#include <signal.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "agent/agent_run.h"
#include "parsed_options.h"

namespace cpplaunch {
namespace {

// A port nobody listens on now (the agent must bind a fixed one: the others need to know it).
int FreePort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

LaunchOptions Options(std::vector<std::string> extra) {
  std::vector<std::string> argv = {
      "--nnodes=1:2",        "--nproc-per-node=2",
      "--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1:" + std::to_string(FreePort()),
      "--rdzv-id=unit",      "--rdzv-conf=last_call_timeout=0,keep_alive_interval=0.2",
      "--log-dir=/dev/null"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--no-python", "/bin/true"});
  return ParsedOptions(argv);
}

bool Says(const Run& run, const std::string& text) {
  INFO(run.err);
  return run.err.find(text) != std::string::npos;
}

TEST_CASE("MultiHostJob: success passes the exit barrier; the store's host exits 0",
          "[agent][multi_host_job]") {
  const auto started = std::chrono::steady_clock::now();
  Run run = RunAgent(Options({}), [](auto&, FakeWorkerGroup& group, const auto& specs) {
    ExitAll(group, specs, 0);
  });
  CHECK(run.code == 0);
  REQUIRE(run.starts == 1);
  const ProcessSpec& rank1 = run.started[0][1];
  CHECK(HasEnv(rank1, "RANK=1"));
  CHECK(HasEnv(rank1, "WORLD_SIZE=2"));
  CHECK(HasEnv(rank1, "GROUP_RANK=0"));
  CHECK(HasEnv(rank1, "TORCHELASTIC_RUN_ID=unit"));
  CHECK(HasEnv(rank1, "TORCHELASTIC_RESTART_COUNT=0"));
  CHECK_FALSE(Says(run, "error"));
  // The linger ends on the store's idle event, long before its 3 s bound.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2500));
}

TEST_CASE("MultiHostJob: --worker-store=rank0 gives the workers group rank 0's offered port",
          "[agent][multi_host_job]") {
  const LaunchOptions options = Options({"--worker-store=rank0"});
  Run run = RunAgent(
      options, [](auto&, FakeWorkerGroup& group, const auto& specs) { ExitAll(group, specs, 0); });
  CHECK(run.code == 0);
  REQUIRE(run.starts == 1);
  const ProcessSpec& rank0 = run.started[0][0];
  const ProcessSpec& rank1 = run.started[0][1];
  CHECK(HasEnv(rank0, "TORCHELASTIC_USE_AGENT_STORE=False"));
  CHECK(HasEnv(rank0, "MASTER_ADDR=127.0.0.1"));  // this agent's address on the store's route
  std::string port;
  for (const std::string& entry : rank0.env) {
    if (entry.starts_with("MASTER_PORT=")) port = entry;
  }
  CHECK(HasEnv(rank1, port));
  CHECK(port != "MASTER_PORT=" + options.rdzv_endpoint.substr(options.rdzv_endpoint.find(':') + 1));
  CHECK(port != "MASTER_PORT=0");
}

TEST_CASE("MultiHostJob: a worker failure ends the round; restarts are counted job-wide",
          "[agent][multi_host_job]") {
  Run run =
      RunAgent(Options({"--max-restarts=1"}), [](auto&, FakeWorkerGroup& group, const auto& specs) {
        group.Exit(specs[1].id, WorkerExit::Exited(5));  // the other is torn down
      });
  CHECK(run.code == 1);
  REQUIRE(run.starts == 2);
  CHECK(HasEnv(run.started[0][0], "TORCHELASTIC_RESTART_COUNT=0"));
  CHECK(HasEnv(run.started[1][0], "TORCHELASTIC_RESTART_COUNT=1"));
  CHECK(Says(run, "restarting on every host (restart 1 of 1)"));
  CHECK(Says(run, "cpplaunch: job failed after 1 restart; root cause: "));
  CHECK(Says(run, "failed (exitcode: 5) local_rank: 1"));
  CHECK(Says(run, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"));
  CHECK(run.stops.at(0).signo == SIGTERM);
}

TEST_CASE("MultiHostJob: a later local exit never replaces the failure being published",
          "[agent][multi_host_job]") {
  // Once the round's channel is up, local rank 1 fails and local rank 0 dies of SIGTERM before
  // the store answered the first notice (as a sibling stopped by a teardown would). The agent
  // used to publish both on one connection; the second failed at once and this host named it.
  Run run = RunAgent(Options({"--max-restarts=1"}), [](boost::asio::io_context& io,
                                                       FakeWorkerGroup& group, const auto& specs) {
    auto timer = std::make_shared<boost::asio::steady_timer>(io, std::chrono::milliseconds(300));
    timer->async_wait([timer, &group, ids = std::vector<int>{specs[0].id, specs[1].id}](auto) {
      group.Exit(ids[1], WorkerExit::Exited(5));
      group.Exit(ids[0], WorkerExit::Signaled(SIGTERM));
    });
  });
  CHECK(run.code == 1);
  REQUIRE(run.starts == 2);
  CHECK(Says(run, "failed (root cause: worker rank 1 (local rank 1) on "));
  CHECK(Says(
      run, "cpplaunch: job failed after 1 restart; root cause: worker rank 1 (local rank 1) on "));
  CHECK_FALSE(Says(run, "failed: killed by SIGTERM"));
}

TEST_CASE("MultiHostJob: a signal while the workers run ends the job with 1, no restart",
          "[agent][multi_host_job]") {
  Run run = RunAgent(Options({"--max-restarts=3"}),
                     [](auto&, FakeWorkerGroup&, const auto&) { ::raise(SIGHUP); });
  CHECK(run.code == 1);
  CHECK(run.starts == 1);
  REQUIRE_FALSE(run.stops.empty());
  CHECK(run.stops[0].signo == SIGHUP);
  CHECK(Says(run, "cpplaunch: received SIGHUP; forwarding it to the workers"));
}

}  // namespace
}  // namespace cpplaunch
