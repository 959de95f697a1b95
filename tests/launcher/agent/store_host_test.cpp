// The agent's store: where it listens, the busy-port fallback, and the idle event the store's
// host waits on before exiting.

#include "launcher/agent/store_host.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>
#include <chrono>

#include "launcher/agent/single_host_job.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

LaunchOptions Options(std::vector<std::string> argv) {
  argv.insert(argv.end(), {"--no-python", "/bin/true"});
  ParseResult parsed = ParseOptions(argv, EnvMap{});
  REQUIRE(parsed.status == ParseStatus::kOk);
  return parsed.options;
}

TEST_CASE("StartStore: a busy port the user did not choose falls back to a free one",
          "[agent][store_host]") {
  boost::asio::io_context io;
  std::vector<std::string> said;
  auto say = [&](const std::string& line) { said.push_back(line); };
  auto holder = StartStore(io, "127.0.0.1", 0, true, say);
  const int busy = holder->port();
  auto moved = StartStore(io, "127.0.0.1", busy, /*port_was_chosen=*/false, say);
  CHECK(moved->port() != busy);
  REQUIRE(said.size() == 1);
  CHECK(said[0] == "port " + std::to_string(busy) + " is busy; the store listens on port " +
                       std::to_string(moved->port()) + " instead (use --master-port to choose)");
  CHECK_THROWS_AS(StartStore(io, "127.0.0.1", busy, /*port_was_chosen=*/true, say), StoreBindError);
}

TEST_CASE("StoreServer::WhenIdle fires when the last connection closes, not before",
          "[agent][store_host]") {
  boost::asio::io_context io;
  auto store = StartStore(io, "127.0.0.1", 0, true, [](const std::string&) {});
  boost::asio::ip::tcp::socket client(io);
  client.connect({boost::asio::ip::make_address("127.0.0.1"), store->port()});
  io.run_for(100ms);  // the server accepts
  REQUIRE(store->connection_count() == 1);
  bool idle = false;
  store->WhenIdle([&] { idle = true; });
  io.run_for(100ms);
  CHECK(!idle);
  client.close();
  for (int i = 0; i < 50 && !idle; ++i) io.run_for(20ms);
  CHECK(idle);

  bool at_once = false;  // nothing open: posted at once
  store->WhenIdle([&] { at_once = true; });
  CHECK(!at_once);  // never inline
  io.run_for(20ms);
  CHECK(at_once);
}

TEST_CASE("SingleHostJob: --standalone picks a fresh run id and a free loopback port",
          "[agent][single_host_job]") {
  boost::asio::io_context io;
  JobHooks hooks{.say = [](const std::string&) {}, .info = [](const std::string&) {}};
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
  JobHooks hooks{.say = [](const std::string&) {}, .info = [](const std::string&) {}};
  SingleHostJob c10d(io, Options({"--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1"}), hooks);
  CHECK(c10d.store_addr() == "127.0.0.1");
  CHECK(c10d.store_port() == 29400);
  CHECK_THROWS_AS(SingleHostJob(io, Options({"--rdzv-endpoint=[::1"}), hooks), std::runtime_error);
}

TEST_CASE("SingleHostJob: the world is this host, and restarts are counted here",
          "[agent][single_host_job]") {
  boost::asio::io_context io;
  JobHooks hooks{.say = [](const std::string&) {}, .info = [](const std::string&) {}};
  SingleHostJob job(io, Options({"--nproc-per-node=3", "--max-restarts=1"}), hooks);
  std::optional<Round> round;
  job.Rendezvous([&](const Round& r) { round = r; }, [](const std::string&) { FAIL("failed"); });
  REQUIRE(round);
  CHECK(round->layout.world_size == 3);
  CHECK(round->restart_count == 0);

  AttemptResult failed;
  failed.outcome = AttemptOutcome::kRestart;
  std::optional<AttemptDecision> decision;
  job.Conclude(failed, [&](const AttemptDecision& d) { decision = d; });
  REQUIRE(decision);
  CHECK(decision->next == NextStep::kNextAttempt);
  job.Rendezvous([&](const Round& r) { round = r; }, [](const std::string&) { FAIL("failed"); });
  CHECK(round->restart_count == 1);

  // A signal between attempts ends the job after this attempt.
  job.OnSignal(SIGINT);
  job.Conclude(failed, [&](const AttemptDecision& d) { decision = d; });
  CHECK(decision->next == NextStep::kExit);
  CHECK(decision->exit_code == ExitCode::kFailure);
}

}  // namespace
}  // namespace cpplaunch
