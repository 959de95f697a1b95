// SingleHostJob: the store's endpoint and run id from the options, the world of one host, and the
// restart count kept here.

#include "launcher/agent/single_host_job.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>
#include <csignal>
#include <optional>

#include "parsed_options.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {
namespace {

LaunchOptions Options(std::vector<std::string> argv) {
  argv.insert(argv.end(), {"--no-python", "/bin/true"});
  return ParsedOptions(argv);
}

JobHooks QuietHooks() {
  return JobHooks{.say = [](const std::string&) {},
                  .info = [](const std::string&) {},
                  .debug = {},
                  .stop_workers = [](const std::string&) { return false; },
                  .entered_exit_barrier = [] {}};
}

TEST_CASE("SingleHostJob: --standalone picks a fresh run id and a free loopback port",
          "[agent][single_host_job]") {
  boost::asio::io_context io;
  const JobHooks hooks = QuietHooks();
  SingleHostJob job(io, Options({"--standalone"}), hooks);
  CHECK(job.run_id().size() == 36);  // a uuid4
  CHECK(job.store_addr() == "127.0.0.1");
  auto store = job.HostStore();
  REQUIRE(store);
  CHECK(job.store_port() == store->port());
  CHECK(job.store_port() != 0);
}

TEST_CASE("SingleHostJob: the rendezvous endpoint sets the store's address",
          "[agent][single_host_job]") {
  boost::asio::io_context io;
  const JobHooks hooks = QuietHooks();
  SingleHostJob c10d(io, Options({"--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1"}), hooks);
  CHECK(c10d.store_addr() == "127.0.0.1");
  CHECK(c10d.store_port() == 29400);
  CHECK_THROWS_AS(SingleHostJob(io, Options({"--rdzv-endpoint=[::1"}), hooks), std::runtime_error);
}

TEST_CASE("SingleHostJob: --worker-store=rank0 gives each attempt a free port of its own",
          "[agent][single_host_job]") {
  boost::asio::io_context io;
  const JobHooks hooks = QuietHooks();
  SingleHostJob agent(io, Options({"--master-port=29533"}), hooks);
  std::optional<Round> round;
  agent.Rendezvous([&](const Round& r) { round = r; },
                   [](const std::string&, ExitCode) { FAIL("ended"); });
  REQUIRE(round);
  CHECK(round->master_port == 29533);

  SingleHostJob rank0(io, Options({"--master-port=0", "--worker-store=rank0"}), hooks);
  auto store = rank0.HostStore();
  REQUIRE(store);
  rank0.Rendezvous([&](const Round& r) { round = r; },
                   [](const std::string&, ExitCode) { FAIL("ended"); });
  REQUIRE(round);
  CHECK(round->master_addr == "127.0.0.1");
  CHECK(round->master_port > 0);
  CHECK(round->master_port != rank0.store_port());
  // Free when handed out: worker rank 0 can bind it.
  boost::asio::ip::tcp::acceptor bind(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::tcp::v4(),
                                         static_cast<unsigned short>(round->master_port)));
  CHECK(bind.is_open());
}

TEST_CASE("SingleHostJob: the world is this host, and restarts are counted here",
          "[agent][single_host_job]") {
  boost::asio::io_context io;
  const JobHooks hooks = QuietHooks();
  SingleHostJob job(io, Options({"--nproc-per-node=3", "--max-restarts=1"}), hooks);
  std::optional<Round> round;
  job.Rendezvous([&](const Round& r) { round = r; },
                 [](const std::string&, ExitCode) { FAIL("ended"); });
  REQUIRE(round);
  CHECK(round->layout.world_size == 3);
  CHECK(round->restart_count == 0);

  AttemptResult failed;
  failed.outcome = AttemptOutcome::kRestart;
  std::optional<AttemptDecision> decision;
  job.Conclude(failed, [&](const AttemptDecision& d) { decision = d; });
  REQUIRE(decision);
  CHECK(decision->next == NextStep::kNextAttempt);
  job.Rendezvous([&](const Round& r) { round = r; },
                 [](const std::string&, ExitCode) { FAIL("ended"); });
  CHECK(round->restart_count == 1);

  // A signal between attempts ends the job after this attempt.
  job.OnSignal(SIGINT);
  job.Conclude(failed, [&](const AttemptDecision& d) { decision = d; });
  CHECK(decision->next == NextStep::kExit);
  CHECK(decision->exit_code == ExitCode::kFailure);
}

}  // namespace
}  // namespace cpplaunch
