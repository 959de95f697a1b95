#include "rendezvous/static/static_rendezvous.h"

#include <catch2/catch.hpp>
#include <memory>

#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/store/client/async_store_client.h"
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

// The repro: two agents behind one address, each PID 1 of its container, once had one
// node id; with one --node-rank both held its claim and ran as GROUP_RANK=0. Ids now carry a
// random part (node_id.h); should two still agree, the second to connect stops in one line.
TEST_CASE("Static rendezvous: a second agent with a node id already joined stops in one line",
          "[rendezvous][static][node_id]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto settings = Settings(server.port(), 0, 1, 1);
  settings.self.node_id = "127.0.0.1_1_0badf00d";
  StaticRendezvous a(io.get_executor(), settings);
  StaticRendezvous b(io.get_executor(), settings);
  auto first = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return first->done; }, 3000ms);
  INFO(first->message());
  CHECK(first->get().group_rank == 0);
  auto second = Spawn(io, b.Next(std::nullopt));
  RunUntil(
      io, [&] { return second->done; }, 3000ms);
  REQUIRE(second->done);
  CHECK(second->message() ==
        "rendezvous failed on node rank 0 (host0 at 127.0.0.1): another agent of job 'job' "
        "already joined as node 127.0.0.1_1_0badf00d (same address, process id and random part: "
        "a copy of this agent?); start this agent again to draw a new node id");
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
    CHECK(result.world_size == 6);
    CHECK(result.base_rank == std::vector<int>{0, 2, 3}.at(result.group_rank));
    REQUIRE(result.members.size() == 3);
    for (int rank = 0; rank < 3; ++rank)
      CHECK(result.Member(rank).node.local_world_size == sizes[rank]);
    CHECK(result.Member(1).node.hostname == "host1");
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

// ---- Faults (issue 15): node-rank claims, replacements, agents that die in the rendezvous.

namespace faults {

// A store client of the agents' side, for looking at their keys.
asio::awaitable<void> ConnectAgent(AsyncStoreClient& client, uint16_t port) {
  co_await client.Connect("127.0.0.1", port, AsyncStoreClient::Clock::now() + 2s);
}

RendezvousSettings Replacement(uint16_t port, int node_rank, int nnodes) {
  auto settings = Settings(port, node_rank, nnodes, 1);
  settings.self.node_id = "127.0.0.1_" + std::to_string(2000 + node_rank);
  settings.self.hostname = "replacement" + std::to_string(node_rank);
  return settings;
}

}  // namespace faults

TEST_CASE(
    "Static rendezvous: a dead agent's connection ends its round, and a replacement with "
    "its node rank joins the job's current round",
    "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto settings_a = Settings(server.port(), 0, 2, 1);
  settings_a.max_restarts = 1;
  auto settings_b = Settings(server.port(), 1, 2, 1);
  settings_b.max_restarts = 1;
  auto settings_b2 = faults::Replacement(server.port(), 1, 2);
  settings_b2.max_restarts = 1;
  StaticRendezvous a(io.get_executor(), settings_a);
  auto b = std::make_unique<StaticRendezvous>(io.get_executor(), settings_b);
  auto ra = Spawn(io, a.Next(std::nullopt));
  auto rb = Spawn(io, b->Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done && rb->done; }, 5000ms);
  REQUIRE(ra->message() == "");
  REQUIRE(rb->message() == "");
  b.reset();  // SIGKILL: the connection closes, the will ends round 0
  AsyncStoreClient probe(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto end = SpawnBody(io, [&]() -> asio::awaitable<Bytes> {
    co_await faults::ConnectAgent(probe, server.port());
    std::vector<std::string> key{EndKey("job", 0)};
    co_await probe.Wait(key, 2s);
    co_return co_await probe.Get(EndKey("job", 0));
  });
  RunUntil(
      io, [&] { return end->done; }, 3000ms);
  std::string error;
  auto notice = RoundEnd::Decode(end->get(), &error);
  REQUIRE(notice);
  CHECK(notice->kind == RoundEndKind::kPeerLost);
  CHECK(notice->node_rank == 1);
  CHECK_THAT(notice->Describe(),
             Catch::Contains("host1") && Catch::Contains("connection to the store closed"));
  // Node 0 restarts into round 1; the replacement, knowing no round, must find round 1 too.
  StaticRendezvous b2(io.get_executor(), settings_b2);
  auto ra1 = Spawn(io, a.Next(RoundTransition{0, 0, true}));
  auto rb2 = Spawn(io, b2.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra1->done && rb2->done; }, 5000ms);
  INFO(ra1->message() << " / " << rb2->message());
  CHECK(ra1->get().round == 1);
  CHECK(rb2->get().round == 1);
  CHECK(rb2->get().restart_count == 1);
  CHECK(rb2->get().group_rank == 1);
  CHECK(ra1->get().Member(1).node.node_id == settings_b2.self.node_id);
}

TEST_CASE("Static rendezvous: a replacement is told when the job has no restarts left",
          "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  StaticRendezvous a(io.get_executor(), Settings(server.port(), 0, 2, 1));
  auto b = std::make_unique<StaticRendezvous>(io.get_executor(), Settings(server.port(), 1, 2, 1));
  auto ra = Spawn(io, a.Next(std::nullopt));
  auto rb = Spawn(io, b->Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done && rb->done; }, 5000ms);
  REQUIRE(rb->message() == "");
  b.reset();
  RunUntil(
      io, [&] { return false; }, 100ms);
  StaticRendezvous b2(io.get_executor(), faults::Replacement(server.port(), 1, 2));
  auto started = std::chrono::steady_clock::now();
  auto rb2 = Spawn(io, b2.Next(std::nullopt));
  RunUntil(
      io, [&] { return rb2->done; }, 3000ms);
  REQUIRE(rb2->done);
  CHECK(std::chrono::steady_clock::now() - started < 1s);
  CHECK_THAT(rb2->message(), Catch::Contains("has no restarts left") &&
                                 Catch::Contains("--max-restarts=0") &&
                                 Catch::Contains("lost the agent on host1"));
}

TEST_CASE("Static rendezvous does not count an agent that died before the round completed",
          "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  std::vector<std::string> progress;
  auto settings_a = Settings(server.port(), 0, 3, 1);
  settings_a.progress = [&](const std::string& line) { progress.push_back(line); };
  StaticRendezvous a(io.get_executor(), settings_a);
  auto b = std::make_unique<StaticRendezvous>(io.get_executor(), Settings(server.port(), 1, 3, 1));
  auto ra = Spawn(io, a.Next(std::nullopt));
  auto rb = Spawn(io, b->Next(std::nullopt));
  RunUntil(
      io, [&] { return false; }, 300ms);  // both published; the round waits for node rank 2
  REQUIRE_FALSE(ra->done);
  b.reset();
  StaticRendezvous c(io.get_executor(), Settings(server.port(), 2, 3, 1));
  auto rc = Spawn(io, c.Next(std::nullopt));
  RunUntil(
      io, [&] { return false; }, 300ms);  // all three records exist, one of a dead agent
  CHECK_FALSE(ra->done);
  CHECK_FALSE(rc->done);
  StaticRendezvous b2(io.get_executor(), faults::Replacement(server.port(), 1, 3));
  auto rb2 = Spawn(io, b2.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done && rb2->done && rc->done; }, 5000ms);
  INFO(ra->message() << " / " << rb2->message() << " / " << rc->message());
  for (const auto& result : {ra->get(), rb2->get(), rc->get()}) {
    CHECK(result.round == 0);
    CHECK(result.restart_count == 0);
    CHECK(result.Member(1).node.node_id == "127.0.0.1_2001");
  }
  bool dropped = false;
  for (const auto& line : progress) {
    dropped = dropped || line.find("node rank 1 (host1") != std::string::npos;
  }
  CHECK(dropped);
}

TEST_CASE("Static rendezvous: a host whose claim was released while it was frozen loses its rank",
          "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto settings_a = Settings(server.port(), 0, 2, 1);
  settings_a.max_restarts = 2;
  auto settings_b = Settings(server.port(), 1, 2, 1);
  settings_b.max_restarts = 2;
  auto settings_b2 = faults::Replacement(server.port(), 1, 2);
  settings_b2.max_restarts = 2;
  StaticRendezvous a(io.get_executor(), settings_a);
  StaticRendezvous b(io.get_executor(), settings_b);
  auto ra = Spawn(io, a.Next(std::nullopt));
  auto rb = Spawn(io, b.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done && rb->done; }, 5000ms);
  REQUIRE(rb->message() == "");
  // What node 0's job channel does when b's heartbeats lapse: end the round, release b's claim.
  AsyncStoreClient peer(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto lost = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await faults::ConnectAgent(peer, server.port());
    RoundEnd notice;
    notice.kind = RoundEndKind::kPeerLost;
    notice.host = "host1";
    notice.node_rank = 1;
    notice.detail = "no heartbeat for 15 s";
    co_await PublishRoundEnd(peer, "job", 0, notice);
    co_await peer.DeleteKey(ra->get().Member(1).liveness_key);
  });
  RunUntil(
      io, [&] { return lost->done; }, 2000ms);
  REQUIRE(lost->message() == "");
  StaticRendezvous b2(io.get_executor(), settings_b2);
  auto ra1 = Spawn(io, a.Next(RoundTransition{0, 0, true}));
  auto rb2 = Spawn(io, b2.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra1->done && rb2->done; }, 5000ms);
  INFO(ra1->message() << " / " << rb2->message());
  CHECK(rb2->get().round == 1);
  // b wakes up and goes for round 1 as well: its rank is taken.
  auto rb1 = Spawn(io, b.Next(RoundTransition{0, 0, true}));
  RunUntil(
      io, [&] { return rb1->done; }, 3000ms);
  CHECK_THAT(rb1->message(), Catch::Contains("lost --node-rank=1 to the agent 127.0.0.1_2001"));
}

TEST_CASE("Static rendezvous: a host that ended the round and left is not waited for",
          "[rendezvous][static]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  StaticRendezvous a(io.get_executor(), Settings(server.port(), 0, 2, 1));
  auto ra = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return false; }, 100ms);  // node 0 waits for node rank 1
  REQUIRE_FALSE(ra->done);
  // What a host leaves behind when it found a config error and exited: the round's end, and its
  // record (with no claim any more).
  AsyncStoreClient gone(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto left = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await faults::ConnectAgent(gone, server.port());
    RoundEnd end;
    end.kind = RoundEndKind::kConfigError;
    end.detail = "node rank 1 says: something is wrong";
    co_await PublishRoundEnd(gone, "job", 0, end);
    NodeInfo node = Settings(server.port(), 1, 2, 1).self;
    co_await gone.Set("cpplaunch/job/r0/static/node/1", node.Encode());
  });
  RunUntil(
      io, [&] { return left->done && ra->done; }, 2000ms);
  REQUIRE(left->message() == "");
  REQUIRE(ra->done);
  CHECK(ra->message() == "node rank 1 says: something is wrong");
}

}  // namespace
}  // namespace cpplaunch
