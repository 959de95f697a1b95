#include "rendezvous/job_channel.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "rendezvous/store/async_store_client.h"
#include "tests/rendezvous/rendezvous_test_support.h"

namespace cpplaunch {
namespace {

// No co_await inside CHECK(): see rendezvous_async_client_test.cpp.
namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::RunUntil;
using testing::Spawn;
using testing::SpawnBody;
using Clock = std::chrono::steady_clock;

RendezvousResult Round(int group_rank, int nodes) {
  RendezvousResult round;
  round.group_rank = group_rank;
  for (int i = 0; i < nodes; ++i) {
    NodeInfo node;
    node.node_id = "n" + std::to_string(i);
    node.hostname = "host" + std::to_string(i);
    node.addr = "127.0.0." + std::to_string(i + 1);
    node.local_world_size = 1;
    round.nodes.push_back(node);
  }
  return round;
}

// One agent's channel plus what its handler saw.
struct Agent {
  std::unique_ptr<JobChannel> channel;
  std::optional<RoundEnd> seen;
  Clock::time_point seen_at;
};

std::vector<std::unique_ptr<Agent>> StartAgents(asio::io_context& io, uint16_t port, int count,
                                                std::chrono::milliseconds keep_alive,
                                                const std::string& store_host = "127.0.0.1") {
  std::vector<std::unique_ptr<Agent>> agents;
  std::vector<std::shared_ptr<testing::Outcome<bool>>> started;
  for (int rank = 0; rank < count; ++rank) {
    JobChannel::Settings settings;
    settings.run_id = "job";
    settings.store_host = store_host;
    settings.store_port = port;
    settings.keep_alive_interval = keep_alive;
    settings.keep_alive_max_attempt = 3;
    settings.heartbeat_timeout = 1s;
    settings.hosts_store = rank == 0;
    auto agent = std::make_unique<Agent>();
    Agent* raw = agent.get();
    agent->channel = std::make_unique<JobChannel>(io.get_executor(), settings, Round(rank, count),
                                                  [raw](const RoundEnd& end) {
                                                    raw->seen = end;
                                                    raw->seen_at = Clock::now();
                                                  });
    started.push_back(Spawn(io, agent->channel->Start()));
    agents.push_back(std::move(agent));
  }
  RunUntil(
      io,
      [&] {
        for (auto& s : started)
          if (!s->done) return false;
        return true;
      },
      3000ms);
  for (auto& s : started) REQUIRE(s->message() == "");
  return agents;
}

bool AllSeen(const std::vector<std::unique_ptr<Agent>>& agents) {
  for (const auto& agent : agents) {
    if (!agent->seen) return false;
  }
  return true;
}

TEST_CASE("JobChannel: a failure on one host reaches every host within milliseconds",
          "[rendezvous][job_channel]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto agents = StartAgents(io, server.port(), 4, 5s);
  RoundEnd failure;
  failure.kind = RoundEndKind::kWorkerFailure;
  failure.host = "host2";
  failure.node_rank = 2;
  failure.rank = 5;
  failure.local_rank = 1;
  failure.detail = "exitcode 3";
  auto sent_at = Clock::now();
  auto ended = Spawn(io, agents[2]->channel->EndRound(failure));
  RunUntil(
      io, [&] { return AllSeen(agents); }, 3000ms);
  REQUIRE(AllSeen(agents));
  for (const auto& agent : agents) {
    CHECK(*agent->seen == failure);
    CHECK(agent->seen_at - sent_at < 100ms);
  }
  CHECK(ended->get() == failure);
  CHECK_THAT(
      failure.Describe(),
      Catch::Contains("worker rank 5 (local rank 1) on host2 (node rank 2) failed: exitcode 3"));
}

TEST_CASE("JobChannel: the first of two failures is everybody's root cause",
          "[rendezvous][job_channel]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto agents = StartAgents(io, server.port(), 3, 5s);
  RoundEnd first;
  first.host = "host0";
  first.detail = "exitcode 1";
  RoundEnd second = first;
  second.host = "host1";
  auto a = Spawn(io, agents[0]->channel->EndRound(first));
  auto b = Spawn(io, agents[1]->channel->EndRound(second));
  RunUntil(
      io, [&] { return a->done && b->done && AllSeen(agents); }, 3000ms);
  REQUIRE(AllSeen(agents));
  CHECK(a->get() == b->get());
  for (const auto& agent : agents) CHECK(*agent->seen == a->get());
}

TEST_CASE("JobChannel: an agent that stops heartbeating is reported lost in time",
          "[rendezvous][job_channel]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto agents = StartAgents(io, server.port(), 3, 100ms);
  RunUntil(
      io, [&] { return false; }, 200ms);
  auto died_at = Clock::now();
  agents[1]->channel->Stop();  // as if SIGKILLed: its heartbeats stop
  RunUntil(
      io, [&] { return agents[0]->seen && agents[2]->seen; }, 3000ms);
  REQUIRE(agents[0]->seen);
  CHECK(agents[0]->seen->kind == RoundEndKind::kPeerLost);
  CHECK(agents[0]->seen->node_rank == 1);
  CHECK(agents[0]->seen->host == "host1");
  CHECK_THAT(agents[0]->seen->Describe(), Catch::Contains("no heartbeat for"));
  CHECK(agents[0]->seen_at - died_at <= 300ms + 50ms);  // interval x max_attempt (+ slack)
  CHECK(agents[0]->seen_at - died_at >= 150ms);
  CHECK_FALSE(agents[1]->seen);  // a stopped channel reports nothing
}

TEST_CASE("JobChannel: losing the store ends the round locally", "[rendezvous][job_channel]") {
  asio::io_context io;
  auto server = std::make_unique<StoreServer>(io, testing::LoopbackServer());
  auto agents = StartAgents(io, server->port(), 2, 5s);
  server->Stop();
  RunUntil(
      io, [&] { return AllSeen(agents); }, 3000ms);
  REQUIRE(AllSeen(agents));
  CHECK(agents[1]->seen->kind == RoundEndKind::kStoreLost);
  CHECK_THAT(agents[1]->seen->detail, Catch::Contains("127.0.0.1:"));
}

TEST_CASE("JobChannel: a lost IPv6 store is named with brackets", "[rendezvous][job_channel]") {
  asio::io_context io;
  StoreServerOptions options = testing::LoopbackServer();
  options.bind_host = "::1";
  auto server = std::make_unique<StoreServer>(io, options);
  const std::string address = "[::1]:" + std::to_string(server->port());
  auto agents = StartAgents(io, server->port(), 2, 5s, "::1");
  server->Stop();
  RunUntil(
      io, [&] { return AllSeen(agents); }, 3000ms);
  REQUIRE(AllSeen(agents));
  CHECK(agents[1]->seen->kind == RoundEndKind::kStoreLost);
  CHECK_THAT(agents[1]->seen->detail, Catch::StartsWith("the store at " + address + " is gone ("));
}

TEST_CASE(
    "JobChannel: exit barrier passes when all arrive, and the store host waits for the "
    "others to leave",
    "[rendezvous][job_channel]") {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto agents = StartAgents(io, server.port(), 3, 5s);
  std::vector<std::shared_ptr<testing::Outcome<bool>>> barriers;
  for (int i = 0; i < 2; ++i) barriers.push_back(Spawn(io, agents[i]->channel->ExitBarrier(200ms)));
  RunUntil(
      io, [&] { return barriers[0]->done && barriers[1]->done; }, 3000ms);
  CHECK_FALSE(barriers[0]->get());  // the third never came
  barriers.clear();
  for (int i = 0; i < 3; ++i) barriers.push_back(Spawn(io, agents[i]->channel->ExitBarrier(2s)));
  RunUntil(
      io, [&] { return barriers[0]->done && barriers[1]->done && barriers[2]->done; }, 3000ms);
  for (auto& barrier : barriers) CHECK(barrier->get());
  auto host_departs = Spawn(io, agents[0]->channel->Depart(2s));
  RunUntil(
      io, [&] { return false; }, 100ms);
  CHECK_FALSE(host_departs->done);
  auto d1 = Spawn(io, agents[1]->channel->Depart(2s));
  auto d2 = Spawn(io, agents[2]->channel->Depart(2s));
  RunUntil(
      io, [&] { return host_departs->done; }, 3000ms);
  CHECK(host_departs->done);
  CHECK(d1->done);
  CHECK(d2->done);
}

}  // namespace
}  // namespace cpplaunch
