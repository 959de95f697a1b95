#include "rendezvous/static_rendezvous.h"

#include <catch2/catch.hpp>
#include <memory>

#include "rendezvous/store/async_store_client.h"
#include "rendezvous/store_steps.h"
#include "tests/rendezvous/rendezvous_test_support.h"

namespace cpplaunch {
namespace {

// No co_await inside CHECK(): see rendezvous_async_client_test.cpp.
namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::RunUntil;
using testing::Spawn;
using testing::SpawnBody;

RendezvousSettings Settings(uint16_t port, int node_rank, int nnodes, int local_world_size) {
  RendezvousSettings settings;
  settings.run_id = "job";
  settings.min_nodes = settings.max_nodes = nnodes;
  settings.node_rank = node_rank;
  settings.store_host = "127.0.0.1";
  settings.store_port = port;
  settings.master_addr = "127.0.0.1";
  settings.master_port = port;
  settings.self.node_id = "127.0.0.1_" + std::to_string(1000 + node_rank);
  settings.self.addr = "127.0.0.1";
  settings.self.hostname = "host" + std::to_string(node_rank);
  settings.self.local_world_size = local_world_size;
  settings.self.nnodes_min = settings.self.nnodes_max = nnodes;
  settings.timeout = 3s;
  settings.progress_interval = 100ms;
  return settings;
}

TEST_CASE("Static rendezvous gives every host the same world, heterogeneous sizes included",
          "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  std::vector<std::unique_ptr<StaticRendezvous>> agents;
  std::vector<std::shared_ptr<testing::Outcome<RendezvousResult>>> results;
  const std::vector<int> sizes{2, 1, 3};
  for (int rank = 2; rank >= 0; --rank) {  // node 0 last: the others wait for it
    agents.push_back(std::make_unique<StaticRendezvous>(
        io.get_executor(), Settings(server.port(), rank, 3, sizes[rank])));
    results.push_back(Spawn(io, agents.back()->Next(std::nullopt)));
  }
  RunUntil(
      io, [&] { return results[0]->done && results[1]->done && results[2]->done; }, 5000ms);
  for (int i = 0; i < 3; ++i) {
    INFO(results[i]->message());
    RendezvousResult result = results[i]->get();
    CHECK(result.group_rank == 2 - i);
    CHECK(result.round == 0);
    CHECK(result.restart_count == 0);
    CHECK(result.local_world_sizes() == sizes);
    CHECK(result.nodes[1].hostname == "host1");
    CHECK(result.master_port == server.port());
  }
}

TEST_CASE("Static rendezvous restart rounds count restarts and drop the workers' keys",
          "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  StaticRendezvous a(io.get_executor(), Settings(server.port(), 0, 2, 1));
  StaticRendezvous b(io.get_executor(), Settings(server.port(), 1, 2, 1));
  AsyncStoreClient worker(io.get_executor());
  auto setup = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await worker.Connect("127.0.0.1", server.port(), AsyncStoreClient::Clock::now() + 2s);
    co_await worker.Set("/worker/attempt_0/default_pg/0//rank_0", "stale address");
  });
  auto ra = Spawn(io, a.Next(std::nullopt));
  auto rb = Spawn(io, b.Next(std::nullopt));
  RunUntil(
      io, [&] { return setup->done && ra->done && rb->done; }, 5000ms);
  REQUIRE(ra->message() == "");
  RoundTransition failed{0, 0, true};
  auto ra1 = Spawn(io, a.Next(failed));
  auto rb1 = Spawn(io, b.Next(failed));
  RunUntil(
      io, [&] { return ra1->done && rb1->done; }, 5000ms);
  INFO(ra1->message() << rb1->message());
  CHECK(ra1->get().round == 1);
  CHECK(rb1->get().restart_count == 1);
  auto listed = Spawn(io, worker.ListKeys());
  RunUntil(
      io, [&] { return listed->done; }, 2000ms);
  // The workers' namespace is empty again; the agents' keys were never in it.
  CHECK(listed->get().empty());
}

TEST_CASE("Static rendezvous times out naming the missing node ranks", "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto settings = Settings(server.port(), 0, 3, 1);
  settings.timeout = 300ms;
  std::vector<std::string> progress;
  settings.progress = [&](const std::string& line) { progress.push_back(line); };
  StaticRendezvous a(io.get_executor(), settings);
  auto started = std::chrono::steady_clock::now();
  auto result = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return result->done; }, 3000ms);
  REQUIRE(result->done);
  CHECK(std::chrono::steady_clock::now() - started < 1s);
  CHECK_THAT(result->message(), Catch::Contains("1 of 3 hosts joined"));
  CHECK_THAT(result->message(), Catch::Contains("missing node ranks 1, 2"));
  CHECK_THAT(result->message(), Catch::Contains("127.0.0.1:" + std::to_string(server.port())));
  REQUIRE_FALSE(progress.empty());
  CHECK_THAT(progress.front(), Catch::Contains("1/3 joined; missing node ranks 1, 2"));
}

TEST_CASE("Static rendezvous fails on every host when --nnodes differs", "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  StaticRendezvous a(io.get_executor(), Settings(server.port(), 0, 2, 1));
  StaticRendezvous b(io.get_executor(), Settings(server.port(), 1, 3, 1));
  auto ra = Spawn(io, a.Next(std::nullopt));
  auto rb = Spawn(io, b.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done && rb->done; }, 5000ms);
  REQUIRE(ra->done);
  REQUIRE(rb->done);
  for (auto message : {ra->message(), rb->message()}) {
    CHECK_THAT(message, Catch::Contains("--nnodes=3"));
    CHECK_THAT(message, Catch::Contains("--nnodes=2"));
  }
}

TEST_CASE("Static rendezvous refuses a node rank used twice", "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto twin = Settings(server.port(), 1, 2, 1);
  twin.self.node_id = "127.0.0.1_9999";
  StaticRendezvous a(io.get_executor(), Settings(server.port(), 0, 2, 1));
  StaticRendezvous b(io.get_executor(), Settings(server.port(), 1, 2, 1));
  StaticRendezvous c(io.get_executor(), twin);
  auto rb = Spawn(io, b.Next(std::nullopt));
  auto rc = Spawn(io, c.Next(std::nullopt));
  auto ra = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done && rb->done && rc->done; }, 5000ms);
  CHECK_THAT(rc->message() + rb->message(),
             Catch::Contains("two hosts were started with --node-rank=1"));
  // The round carries the config error, so the hosts that got through stop too.
  AsyncStoreClient probe(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto end = SpawnBody(io, [&]() -> asio::awaitable<Bytes> {
    co_await probe.Connect("127.0.0.1", server.port(), AsyncStoreClient::Clock::now() + 2s);
    co_return co_await probe.Get(EndKey("job", 0));
  });
  RunUntil(
      io, [&] { return end->done; }, 2000ms);
  CHECK_THAT(end->get(), Catch::Contains("config_error"));
}

TEST_CASE("Static rendezvous says which address it could not reach", "[rendezvous][static]") {
  asio::io_context io;
  uint16_t closed_port;
  {
    StoreServer probe(io, testing::LoopbackServer());
    closed_port = probe.port();
  }
  auto settings = Settings(closed_port, 1, 2, 1);
  settings.timeout = 300ms;
  StaticRendezvous a(io.get_executor(), settings);
  auto result = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return result->done; }, 3000ms);
  CHECK_THAT(result->message(), Catch::Contains("127.0.0.1:" + std::to_string(closed_port)));
  CHECK_THAT(result->message(), Catch::Contains("refused"));
  CHECK_THAT(result->message(), Catch::Contains("host1"));
}

}  // namespace
}  // namespace cpplaunch
