#include "rendezvous/c10d/job_channel.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>

#include "rendezvous/c10d/dynamic_rendezvous.h"
#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/static/static_rendezvous.h"
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
using Clock = std::chrono::steady_clock;

RendezvousResult Round(int group_rank, int nodes) {
  RendezvousResult round;
  round.group_rank = group_rank;
  std::vector<NodeInfo> all;
  for (int i = 0; i < nodes; ++i) {
    NodeInfo node;
    node.node_id = "n" + std::to_string(i);
    node.hostname = "host" + std::to_string(i);
    node.addr = "127.0.0." + std::to_string(i + 1);
    node.local_world_size = 1;
    all.push_back(node);
  }
  SetEveryMember(&round, std::move(all), std::vector<std::string>(nodes));
  return round;
}

// One agent's channel plus what its handler saw.
struct Agent {
  std::unique_ptr<JobChannel> channel;
  std::optional<RoundEnd> seen;
  Clock::time_point seen_at;

  // The handler of every channel below: it records the round's end and when it came.
  JobChannel::EndHandler Recorder() {
    return [this](const RoundEnd& end) {
      seen = end;
      seen_at = Clock::now();
    };
  }
};

// An agent whose channel works on `connection` (its rendezvous'), or without one on its own.
std::unique_ptr<Agent> MakeAgent(asio::io_context& io, JobChannel::Settings settings,
                                 RendezvousResult round, AsyncStoreClient* connection = nullptr) {
  auto agent = std::make_unique<Agent>();
  if (connection) {
    agent->channel = std::make_unique<JobChannel>(io.get_executor(), std::move(settings),
                                                  std::move(round), agent->Recorder(), *connection);
  } else {
    agent->channel = std::make_unique<JobChannel>(io.get_executor(), std::move(settings),
                                                  std::move(round), agent->Recorder());
  }
  return agent;
}

// Starts every agent's channel; each must have started within 3 s.
void StartChannels(asio::io_context& io, const std::vector<std::unique_ptr<Agent>>& agents) {
  std::vector<std::shared_ptr<testing::Outcome<bool>>> started;
  for (const auto& agent : agents) started.push_back(Spawn(io, agent->channel->Start()));
  testing::RunUntilAllDone(io, started, 3000ms);
  for (auto& s : started) REQUIRE(s->message() == "");
}

// `count` agents of one round (rank 0 hosts the store), their channels started.
std::vector<std::unique_ptr<Agent>> StartAgents(asio::io_context& io, uint16_t port, int count,
                                                std::chrono::milliseconds keep_alive,
                                                const std::string& store_host = "127.0.0.1") {
  std::vector<std::unique_ptr<Agent>> agents;
  for (int rank = 0; rank < count; ++rank) {
    JobChannel::Settings settings;
    settings.run_id = "job";
    settings.store_host = store_host;
    settings.store_port = port;
    settings.keep_alive_interval = keep_alive;
    settings.keep_alive_max_attempt = 3;
    settings.heartbeat_timeout = 1s;
    settings.hosts_store = rank == 0;
    agents.push_back(MakeAgent(io, settings, Round(rank, count)));
  }
  StartChannels(io, agents);
  return agents;
}

bool AllSeen(const std::vector<std::unique_ptr<Agent>>& agents) {
  for (const auto& agent : agents) {
    if (!agent->seen) return false;
  }
  return true;
}

// Two agents of a real static round: their rendezvous (whose connections hold the node-rank
// claims and the wills) and their job channels with default heartbeats unless told otherwise.
struct ArmedJob {
  std::vector<std::unique_ptr<StaticRendezvous>> rendezvous;
  std::vector<std::unique_ptr<Agent>> agents;
  std::vector<RendezvousResult> rounds;
};

ArmedJob StartArmedJob(asio::io_context& io, uint16_t port, std::chrono::milliseconds keep_alive) {
  ArmedJob job;
  std::vector<std::shared_ptr<testing::Outcome<RendezvousResult>>> joined;
  for (int rank = 0; rank < 2; ++rank) {
    RendezvousSettings settings;
    settings.run_id = "job";
    settings.min_nodes = settings.max_nodes = 2;
    settings.node_rank = rank;
    settings.store_host = "127.0.0.1";
    settings.store_port = port;
    settings.self.node_id = "127.0.0.1_" + std::to_string(100 + rank);
    settings.self.addr = "127.0.0.1";
    settings.self.hostname = "host" + std::to_string(rank);
    settings.self.local_world_size = 1;
    settings.self.nnodes_min = settings.self.nnodes_max = 2;
    settings.timeout = 3s;
    job.rendezvous.push_back(std::make_unique<StaticRendezvous>(io.get_executor(), settings));
    joined.push_back(Spawn(io, job.rendezvous.back()->Next(std::nullopt)));
  }
  RunUntil(
      io, [&] { return joined[0]->done && joined[1]->done; }, 3000ms);
  for (int rank = 0; rank < 2; ++rank) {
    job.rounds.push_back(joined[rank]->get());
    JobChannel::Settings settings;
    settings.run_id = "job";
    settings.store_host = "127.0.0.1";
    settings.store_port = port;
    settings.keep_alive_interval = keep_alive;
    settings.hosts_store = rank == 0;
    job.agents.push_back(MakeAgent(io, settings, job.rounds[rank]));
  }
  StartChannels(io, job.agents);
  return job;
}

// A store on loopback and the agents of one round on it: the set-up of most tests below.
struct ChannelTest : testing::LoopbackStore {
  std::vector<std::unique_ptr<Agent>> Agents(int count, std::chrono::milliseconds keep_alive) {
    return StartAgents(io, server.port(), count, keep_alive);
  }
  ArmedJob Job(std::chrono::milliseconds keep_alive) {
    return StartArmedJob(io, server.port(), keep_alive);
  }
};

TEST_CASE_METHOD(ChannelTest,
                 "JobChannel: a failure on one host reaches every host within milliseconds",
                 "[rendezvous][job_channel]") {
  auto agents = Agents(4, 5s);
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

TEST_CASE_METHOD(ChannelTest, "JobChannel: the first of two failures is everybody's root cause",
                 "[rendezvous][job_channel]") {
  auto agents = Agents(3, 5s);
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

TEST_CASE_METHOD(ChannelTest,
                 "JobChannel: an agent that stops heartbeating is reported lost in time",
                 "[rendezvous][job_channel]") {
  auto agents = Agents(3, 100ms);
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

TEST_CASE_METHOD(
    ChannelTest,
    "JobChannel: agents watch a few peers each, and a block of silent neighbours is found",
    "[rendezvous][job_channel]") {
  // In a job of 9 each agent reads only the counters 1, 2, 4 and 8 ranks after it; ranks 3-5 go
  // silent together, and rank 2 (just before them) reports the first of them within the limit.
  auto agents = Agents(9, 100ms);
  RunUntil(
      io, [&] { return false; }, 200ms);
  auto died_at = Clock::now();
  for (int rank : {3, 4, 5}) agents[rank]->channel->Stop();
  RunUntil(
      io,
      [&] {
        for (int rank : {0, 1, 2, 6, 7, 8})
          if (!agents[rank]->seen) return false;
        return true;
      },
      3000ms);
  for (int rank : {0, 1, 2, 6, 7, 8}) {
    REQUIRE(agents[rank]->seen);
    CHECK(agents[rank]->seen->kind == RoundEndKind::kPeerLost);
    CHECK(agents[rank]->seen->node_rank >= 3);
    CHECK(agents[rank]->seen->node_rank <= 5);
    CHECK(agents[rank]->seen_at - died_at <= 300ms + 50ms);
  }
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

TEST_CASE_METHOD(
    ChannelTest,
    "JobChannel: exit barrier passes when all arrive, and the store host waits for the "
    "others to leave",
    "[rendezvous][job_channel]") {
  auto agents = Agents(3, 5s);
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

TEST_CASE_METHOD(ChannelTest,
                 "JobChannel: an agent whose connections close is lost within milliseconds, with "
                 "default heartbeats",
                 "[rendezvous][job_channel]") {
  auto job = Job(5s);
  auto died_at = Clock::now();
  job.agents[1].reset();  // SIGKILL: every connection of host 1 closes
  job.rendezvous[1].reset();
  RunUntil(
      io, [&] { return job.agents[0]->seen.has_value(); }, 3000ms);
  REQUIRE(job.agents[0]->seen);
  CHECK(job.agents[0]->seen->kind == RoundEndKind::kPeerLost);
  CHECK(job.agents[0]->seen->node_rank == 1);
  CHECK_THAT(job.agents[0]->seen->Describe(),
             Catch::Contains("host1") && Catch::Contains("connection to the store closed"));
  CHECK(job.agents[0]->seen_at - died_at < 200ms);  // keep_alive 5 s x 3 would take 15 s
}

TEST_CASE_METHOD(ChannelTest, "JobChannel: after a clean departure an agent's exit ends nothing",
                 "[rendezvous][job_channel]") {
  auto job = Job(5s);
  auto disarmed = Spawn(io, job.rendezvous[1]->Disarm());
  RunUntil(
      io, [&] { return disarmed->done; }, 2000ms);
  job.agents[1].reset();
  job.rendezvous[1].reset();
  RunUntil(
      io, [&] { return false; }, 300ms);
  CHECK_FALSE(job.agents[0]->seen);
}

TEST_CASE_METHOD(
    ChannelTest,
    "JobChannel: the agent reporting a peer whose heartbeats lapsed releases its node rank",
    "[rendezvous][job_channel]") {
  auto job = Job(100ms);
  job.agents[1]->channel->Stop();  // frozen: heartbeats stop, the rendezvous connection stays
  RunUntil(
      io, [&] { return job.agents[0]->seen.has_value(); }, 3000ms);
  REQUIRE(job.agents[0]->seen);
  CHECK_THAT(job.agents[0]->seen->Describe(), Catch::Contains("no heartbeat for"));
  AsyncStoreClient probe(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto claim = SpawnBody(io, [&]() -> asio::awaitable<std::optional<Bytes>> {
    co_await probe.Connect("127.0.0.1", server.port(), Clock::now() + 2s);
    co_return co_await ReadIfPresent(probe, job.rounds[0].Member(1).liveness_key);
  });
  RunUntil(
      io, [&] { return claim->done; }, 2000ms);
  INFO(claim->message());
  CHECK_FALSE(claim->get().has_value());
}

// ---- One store connection per agent: the channel works on the rendezvous' connection.

namespace shared_connection {

RendezvousSettings AgentSettings(uint16_t port, int id, int nodes) {
  RendezvousSettings settings;
  settings.run_id = "one-conn";
  settings.min_nodes = nodes;
  settings.max_nodes = nodes;
  settings.store_host = "127.0.0.1";
  settings.store_port = port;
  settings.master_addr = "127.0.0.1";
  settings.master_port = port;
  settings.self.node_id = "127.0.0.1_" + std::to_string(6000 + id);
  settings.self.addr = "127.0.0.1";
  settings.self.hostname = "host" + std::to_string(id);
  settings.self.local_world_size = 1;
  settings.self.nnodes_min = nodes;
  settings.self.nnodes_max = nodes;
  settings.join_timeout = 5s;
  settings.last_call_timeout = 300ms;
  return settings;
}

JobChannel::Settings ChannelSettings(uint16_t port, std::chrono::milliseconds keep_alive,
                                     std::chrono::milliseconds heartbeat_timeout) {
  JobChannel::Settings settings;
  settings.run_id = "one-conn";
  settings.store_host = "127.0.0.1";
  settings.store_port = port;
  settings.keep_alive_interval = keep_alive;
  settings.heartbeat_timeout = heartbeat_timeout;
  return settings;
}

}  // namespace shared_connection

TEST_CASE_METHOD(
    ChannelTest,
    "JobChannel on the rendezvous' connection: the store sees one connection per agent",
    "[rendezvous][job_channel]") {
  using namespace shared_connection;
  constexpr int kAgents = 3;
  std::vector<std::unique_ptr<DynamicRendezvous>> rendezvous;
  std::vector<std::shared_ptr<testing::Outcome<RendezvousResult>>> rounds;
  for (int id = 0; id < kAgents; ++id) {
    rendezvous.push_back(std::make_unique<DynamicRendezvous>(
        io.get_executor(), AgentSettings(server.port(), id, kAgents)));
    rounds.push_back(Spawn(io, rendezvous.back()->Next(std::nullopt)));
  }
  testing::RunUntilAllDone(io, rounds, 5000ms);
  std::vector<std::unique_ptr<Agent>> agents;
  for (int id = 0; id < kAgents; ++id) {
    INFO(rounds[id]->message());
    agents.push_back(MakeAgent(io, ChannelSettings(server.port(), 5s, 1s), rounds[id]->get(),
                               rendezvous[id]->connection()));
  }
  StartChannels(io, agents);
  // Heartbeats, the WAIT on the end key and the rendezvous' keys: all on one connection each.
  CHECK(server.connection_count() == kAgents);

  // Stopping a channel ends its operations, not its agent's connection (its keys and will).
  agents[2]->channel->Stop();
  CHECK(rendezvous[2]->connection()->connected());
  RoundEnd failure;
  failure.kind = RoundEndKind::kWorkerFailure;
  failure.host = "host0";
  failure.node_rank = 0;
  auto ended = Spawn(io, agents[0]->channel->EndRound(failure));
  RunUntil(
      io, [&] { return agents[0]->seen && agents[1]->seen; }, 2000ms);
  REQUIRE(agents[1]->seen);
  CHECK(agents[1]->seen->kind == RoundEndKind::kWorkerFailure);
  CHECK_FALSE(agents[2]->seen);
  CHECK(server.connection_count() == kAgents);
}

TEST_CASE("JobChannel on a shared connection: a store that stops answering ends the round",
          "[rendezvous][job_channel]") {
  using namespace shared_connection;
  // The store runs on a thread of its own, so that it can be frozen with its connections open.
  asio::io_context store_io;
  StoreServer server(store_io, testing::LoopbackServer());
  std::atomic<bool> frozen{false};
  std::atomic<bool> done{false};
  std::thread store_thread([&] {
    while (!done) {
      store_io.run_for(10ms);
      while (frozen && !done) std::this_thread::sleep_for(10ms);
    }
  });
  asio::io_context io;
  AsyncStoreClient connection(io.get_executor(), AsyncStoreClient::Options::Agent(10s, ""));
  auto connected = Spawn(io, connection.Connect("127.0.0.1", server.port(), Clock::now() + 2s));
  RunUntil(
      io, [&] { return connected->done; }, 2000ms);
  REQUIRE(connected->message() == "");
  Agent agent;
  agent.channel =
      std::make_unique<JobChannel>(io.get_executor(), ChannelSettings(server.port(), 200ms, 500ms),
                                   Round(0, 1), agent.Recorder(), connection);
  auto started = Spawn(io, agent.channel->Start());
  RunUntil(
      io, [&] { return started->done; }, 2000ms);
  REQUIRE(started->message() == "");
  RunUntil(
      io, [] { return false; }, 200ms);
  frozen = true;
  const auto froze_at = Clock::now();
  RunUntil(
      io, [&] { return agent.seen.has_value(); }, 3000ms);
  frozen = false;
  done = true;
  store_thread.join();
  REQUIRE(agent.seen);
  CHECK(agent.seen->kind == RoundEndKind::kStoreLost);
  CHECK_THAT(agent.seen->detail, Catch::Contains("no answer"));
  CHECK(agent.seen_at - froze_at < 1500ms);
  // Only the heartbeat timed out: the agent's own connection (its keys) is still open.
  CHECK(connection.connected());
}

}  // namespace
}  // namespace cpplaunch
