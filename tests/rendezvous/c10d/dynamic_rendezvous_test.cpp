#include "rendezvous/c10d/dynamic_rendezvous.h"

#include <catch2/catch.hpp>
#include <memory>
#include <set>

#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/core/round_assignment.h"
#include "rendezvous/store/client/async_store_client.h"
#include "tests/rendezvous/rendezvous_test_support.h"

namespace cpplaunch {
namespace {

// No co_await inside CHECK(): see rendezvous_async_client_test.cpp.
namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::Outcome;
using testing::RunUntil;
using testing::Spawn;
using testing::SpawnBody;
using Clock = std::chrono::steady_clock;

RendezvousSettings Settings(uint16_t port, int id, int min_nodes, int max_nodes) {
  RendezvousSettings settings;
  settings.run_id = "elastic";
  settings.min_nodes = min_nodes;
  settings.max_nodes = max_nodes;
  settings.store_host = "127.0.0.1";
  settings.store_port = port;
  settings.master_addr = "127.0.0.1";
  settings.master_port = port;
  settings.self.node_id = "127.0.0.1_" + std::to_string(5000 + id);
  settings.self.addr = "127.0.0.1";
  settings.self.hostname = "host" + std::to_string(id);
  settings.self.local_world_size = id + 1;
  settings.self.nnodes_min = min_nodes;
  settings.self.nnodes_max = max_nodes;
  settings.join_timeout = 5s;
  settings.last_call_timeout = 300ms;
  settings.progress_interval = 100ms;
  return settings;
}

using Results = std::vector<std::shared_ptr<Outcome<RendezvousResult>>>;

// A store on loopback and the agents joining through it.
struct DynamicJob : testing::LoopbackStore {
  std::vector<std::unique_ptr<DynamicRendezvous>> agents;
  Results results;

  // Starts a new agent's first join; its outcome is results.back().
  void Join(const RendezvousSettings& settings) {
    agents.push_back(std::make_unique<DynamicRendezvous>(io.get_executor(), settings));
    results.push_back(Spawn(io, agents.back()->Next(std::nullopt)));
  }
};

TEST_CASE_METHOD(DynamicJob, "Dynamic rendezvous completes at MAX at once with deterministic ranks",
                 "[rendezvous][dynamic]") {
  for (int id : {2, 0, 1}) {
    auto settings = Settings(server.port(), id, 3, 3);
    settings.last_call_timeout = 60s;  // must not matter: MAX completes at once
    Join(settings);
  }
  auto started = Clock::now();
  testing::RunUntilAllDone(io, results, 5000ms);
  CHECK(Clock::now() - started < 1s);
  std::set<int> ranks;
  for (size_t i = 0; i < results.size(); ++i) {
    INFO(results[i]->message());
    RendezvousResult result = results[i]->get();
    ranks.insert(result.group_rank);
    CHECK(result.group_world_size() == 3);
    // Node ids sort by id: group rank r runs r + 1 workers.
    CHECK(result.world_size == 6);
    CHECK(result.base_rank == std::vector<int>{0, 1, 3}.at(result.group_rank));
    CHECK(result.members.size() == 3);  // every member is a heartbeat peer at this size
    CHECK(result.self().hostname == "host" + std::to_string(result.group_rank));
  }
  CHECK(ranks == std::set<int>{0, 1, 2});
}

// The repro: two agents behind one address, each PID 1 of its container, once had one
// node id: with --nnodes=1:2 both ran as GROUP_RANK=0 WORLD_SIZE=1, with --nnodes=2 both waited
// for the join timeout as one participant. The second to connect now stops in one line.
TEST_CASE_METHOD(DynamicJob,
                 "Dynamic rendezvous: a second agent with a node id already joined stops",
                 "[rendezvous][dynamic][node_id]") {
  const int min_nodes = GENERATE(1, 2);  // --nnodes=1:2 and --nnodes=2
  auto settings = Settings(server.port(), 0, min_nodes, 2);
  settings.self.node_id = "127.0.0.1_1_0badf00d";
  settings.last_call_timeout = 50ms;
  Join(settings);
  Join(settings);
  auto failed_one = [&](const auto& result) { return result->done && result->error; };
  RunUntil(
      io, [&] { return failed_one(results[0]) || failed_one(results[1]); }, 3000ms);
  // One of them (whichever counted the id second) failed; the other joined or still waits.
  const auto& failed = failed_one(results[0]) ? results[0] : results[1];
  REQUIRE(failed->done);
  CHECK(failed->message() ==
        "rendezvous failed on host0 at 127.0.0.1: another agent of job 'elastic' already joined "
        "as node 127.0.0.1_1_0badf00d (same address, process id and random part: a copy of this "
        "agent?); start this agent again to draw a new node id");
  const auto& other = failed == results[0] ? results[1] : results[0];
  if (other->done) {
    INFO(other->message());
    CHECK(other->get().group_world_size() == 1);
  }
}

TEST_CASE_METHOD(testing::LoopbackStore, "Dynamic rendezvous completes at MIN after the last call",
                 "[rendezvous][dynamic]") {
  DynamicRendezvous a(io.get_executor(), Settings(server.port(), 0, 2, 4));
  DynamicRendezvous b(io.get_executor(), Settings(server.port(), 1, 2, 4));
  auto started = Clock::now();
  Results results{Spawn(io, a.Next(std::nullopt)), Spawn(io, b.Next(std::nullopt))};
  testing::RunUntilAllDone(io, results, 5000ms);
  auto elapsed = Clock::now() - started;
  INFO(results[0]->message());
  CHECK(results[0]->get().group_world_size() == 2);
  CHECK(elapsed >= 290ms);
  CHECK(elapsed < 800ms);
}

TEST_CASE_METHOD(
    testing::LoopbackStore,
    "Dynamic rendezvous: a late host triggers a membership restart that keeps the count",
    "[rendezvous][dynamic]") {
  DynamicRendezvous a(io.get_executor(), Settings(server.port(), 0, 1, 3));
  DynamicRendezvous b(io.get_executor(), Settings(server.port(), 1, 1, 3));
  auto settings_c = Settings(server.port(), 2, 1, 3);
  std::vector<std::string> progress;
  settings_c.progress = [&](const std::string& line) { progress.push_back(line); };
  DynamicRendezvous c(io.get_executor(), settings_c);
  Results first{Spawn(io, a.Next(std::nullopt)), Spawn(io, b.Next(std::nullopt))};
  testing::RunUntilAllDone(io, first, 5000ms);
  REQUIRE(first[0]->get().group_world_size() == 2);

  auto late = Spawn(io, c.Next(std::nullopt));
  AsyncStoreClient probe(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto end = SpawnBody(io, [&]() -> asio::awaitable<Bytes> {
    co_await probe.Connect("127.0.0.1", server.port(), AsyncStoreClient::Clock::now() + 2s);
    std::vector<std::string> keys{EndKey("elastic", 0)};
    co_await probe.Wait(keys, 3s);
    co_return co_await probe.Get(EndKey("elastic", 0));
  });
  RunUntil(
      io, [&] { return end->done; }, 5000ms);
  CHECK_THAT(end->get(), Catch::Contains("membership_change"));
  CHECK_FALSE(late->done);

  RoundTransition membership{0, 0, false};
  Results second{Spawn(io, a.Next(membership)), Spawn(io, b.Next(membership)), late};
  testing::RunUntilAllDone(io, second, 5000ms);
  for (const auto& result : second) {
    INFO(result->message());
    CHECK(result->get().round == 1);
    CHECK(result->get().restart_count == 0);
    CHECK(result->get().group_world_size() == 3);
  }
}

TEST_CASE_METHOD(testing::LoopbackStore,
                 "Dynamic rendezvous fails on every host when --nnodes differs",
                 "[rendezvous][dynamic]") {
  DynamicRendezvous a(io.get_executor(), Settings(server.port(), 0, 2, 2));
  DynamicRendezvous b(io.get_executor(), Settings(server.port(), 1, 3, 3));
  auto ra = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return false; }, 50ms);
  auto rb = Spawn(io, b.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done && rb->done; }, 3000ms);
  REQUIRE(ra->done);
  REQUIRE(rb->done);
  CHECK_THAT(rb->message(), Catch::Contains("--nnodes=3 but the job's rendezvous uses --nnodes=2"));
  CHECK_THAT(ra->message(), Catch::Contains("closed"));
  CHECK_THAT(ra->message(), Catch::Contains("--nnodes=3"));
}

TEST_CASE_METHOD(testing::LoopbackStore,
                 "Dynamic rendezvous join timeout leaves the round and says how far it got",
                 "[rendezvous][dynamic]") {
  auto settings = Settings(server.port(), 0, 2, 2);
  settings.join_timeout = 300ms;
  std::vector<std::string> progress;
  settings.progress = [&](const std::string& line) { progress.push_back(line); };
  DynamicRendezvous a(io.get_executor(), settings);
  auto ra = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done; }, 3000ms);
  REQUIRE(ra->done);
  CHECK_THAT(ra->message(), Catch::Contains("timed out"));
  CHECK_THAT(ra->message(), Catch::Contains("1 host(s) had joined round 0"));
  REQUIRE_FALSE(progress.empty());
  CHECK_THAT(progress.front(), Catch::Contains("1 joined [127.0.0.1_5000]; need 1 more to start"));
  // The next host does not count the one that left.
  auto settings_b = Settings(server.port(), 1, 2, 2);
  settings_b.join_timeout = 200ms;
  DynamicRendezvous b(io.get_executor(), settings_b);
  auto rb = Spawn(io, b.Next(std::nullopt));
  RunUntil(
      io, [&] { return rb->done; }, 3000ms);
  CHECK_THAT(rb->message(), Catch::Contains("1 host(s) had joined round 0"));
}

TEST_CASE_METHOD(testing::LoopbackStore,
                 "Dynamic rendezvous after Close refuses late hosts with the reason",
                 "[rendezvous][dynamic]") {
  DynamicRendezvous a(io.get_executor(), Settings(server.port(), 0, 1, 1));
  auto ra = Spawn(io, a.Next(std::nullopt));
  RunUntil(
      io, [&] { return ra->done; }, 3000ms);
  auto closing = Spawn(io, a.Close("the job finished"));
  RunUntil(
      io, [&] { return closing->done; }, 3000ms);
  DynamicRendezvous b(io.get_executor(), Settings(server.port(), 1, 1, 1));
  auto rb = Spawn(io, b.Next(std::nullopt));
  RunUntil(
      io, [&] { return rb->done; }, 3000ms);
  CHECK_THAT(rb->message(), Catch::Contains("the job finished"));
  // Issue 27: the refusal says how to run the job again.
  CHECK_THAT(rb->message(), Catch::EndsWith("); give the new job another --rdzv-id, or wait until "
                                            "the old job's store host has exited"));
}

TEST_CASE_METHOD(DynamicJob, "Dynamic rendezvous of 64 hosts completes quickly",
                 "[rendezvous][dynamic]") {
  auto started = Clock::now();
  for (int id = 0; id < 64; ++id) {
    Join(Settings(server.port(), id, 64, 64));
  }
  testing::RunUntilAllDone(io, results, 10000ms);
  auto elapsed = Clock::now() - started;
  const double ms = std::chrono::duration<double, std::milli>(elapsed).count();
  WARN("64 in-process agents completed in " << ms << " ms");
  CHECK(elapsed < 2s);
  for (const auto& result : results) CHECK(result->get().group_world_size() == 64);
}

TEST_CASE_METHOD(testing::LoopbackStore,
                 "Dynamic rendezvous does not count a host that died before the round completed",
                 "[rendezvous][dynamic]") {
  auto settings_a = Settings(server.port(), 0, 2, 3);
  settings_a.last_call_timeout = 1s;
  auto settings_b = Settings(server.port(), 1, 2, 3);
  settings_b.last_call_timeout = 1s;
  auto settings_c = Settings(server.port(), 2, 2, 3);
  settings_c.last_call_timeout = 1s;
  DynamicRendezvous a(io.get_executor(), settings_a);
  auto b = std::make_unique<DynamicRendezvous>(io.get_executor(), settings_b);
  DynamicRendezvous c(io.get_executor(), settings_c);
  auto ra = Spawn(io, a.Next(std::nullopt));
  auto rb = Spawn(io, b->Next(std::nullopt));
  RunUntil(
      io, [&] { return false; }, 200ms);  // MIN reached: the last call runs
  REQUIRE_FALSE(ra->done);
  b.reset();                                  // dies during the last call
  auto rc = Spawn(io, c.Next(std::nullopt));  // MAX would complete the round with b in it
  RunUntil(
      io, [&] { return ra->done && rc->done; }, 5000ms);
  INFO(ra->message() << " / " << rc->message());
  for (const auto& result : {ra->get(), rc->get()}) {
    CHECK(result.round == 0);
    CHECK(result.group_world_size() == 2);
    for (const auto& member : result.members) {
      CHECK(member.node.node_id != settings_b.self.node_id);
    }
  }
}

TEST_CASE_METHOD(DynamicJob,
                 "Dynamic rendezvous: a frozen admitter sends hosts to take turns, and a dead turn "
                 "holder delays them by 1 s",
                 "[rendezvous][dynamic]") {
  // The admission role is held by a connection that never admits (a frozen host): after
  // queue_timeout each host joins by itself, taking turns. A host that took the first write
  // ticket and died never passes its turn: the next ticket's holder waits at most kTurnWait
  // (1 s), then writes anyway, and the others follow in turn.
  AsyncStoreClient frozen(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  AsyncStoreClient dead(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto taken = SpawnBody(io, [&]() -> asio::awaitable<int64_t> {
    co_await frozen.Connect("127.0.0.1", server.port(), AsyncStoreClient::Clock::now() + 2s);
    co_await frozen.Claim(rendezvous_keys::Base("elastic") + "dynamic/admitter", "frozen");
    co_await dead.Connect("127.0.0.1", server.port(), AsyncStoreClient::Clock::now() + 2s);
    co_return co_await dead.Add(rendezvous_keys::Base("elastic") + "dynamic/ticket", 1);
  });
  RunUntil(
      io, [&] { return taken->done; }, 3000ms);
  REQUIRE(taken->get() == 1);
  dead.Close();
  const auto started = Clock::now();
  for (int id = 0; id < 3; ++id) {
    auto settings = Settings(server.port(), id, 3, 3);
    settings.queue_timeout = 100ms;
    Join(settings);
  }
  testing::RunUntilAllDone(io, results, 4000ms);
  const auto elapsed = Clock::now() - started;
  for (const auto& result : results) CHECK(result->get().group_world_size() == 3);
  CHECK(elapsed >= 1000ms);  // the queue, then the turn were waited for
  CHECK(elapsed < 2600ms);   // once: the later tickets were passed on at once
}

// What a finished join left in the store: the job's state and how many write turns were taken.
struct AfterJoin {
  std::optional<RendezvousState> state;
  int64_t tickets = 0;
};

AfterJoin ReadAfterJoin(asio::io_context& io, uint16_t port) {
  AsyncStoreClient probe(io.get_executor(), AsyncStoreClient::Options::Agent(2s, ""));
  auto read = SpawnBody(io, [&]() -> asio::awaitable<AfterJoin> {
    co_await probe.Connect("127.0.0.1", port, AsyncStoreClient::Clock::now() + 2s);
    AfterJoin after;
    const Bytes state = co_await probe.Get(rendezvous_keys::Base("elastic") + "dynamic/state");
    std::string error;
    after.state = RendezvousState::Decode(state, &error);
    after.tickets = co_await probe.Add(rendezvous_keys::Base("elastic") + "dynamic/ticket", 0);
    co_return after;
  });
  RunUntil(
      io, [&] { return read->done; }, 2000ms);
  return read->get();
}

TEST_CASE_METHOD(
    DynamicJob,
    "Dynamic rendezvous: hosts arriving together join in a few writes of the state, and "
    "each learns only its own place",
    "[rendezvous][dynamic]") {
  constexpr int kHosts = 64;
  for (int id = 0; id < kHosts; ++id) {
    auto settings = Settings(server.port(), id, kHosts, kHosts);
    settings.self.local_world_size = 2;
    Join(settings);
  }
  testing::RunUntilAllDone(io, results, 10000ms);
  std::set<int> ranks;
  for (const auto& outcome : results) {
    INFO(outcome->message());
    const RendezvousResult result = outcome->get();
    ranks.insert(result.group_rank);
    CHECK(result.group_world_size() == kHosts);
    CHECK(result.world_size == 2 * kHosts);
    CHECK(result.base_rank == 2 * result.group_rank);
    std::vector<int> listed;
    for (const auto& member : result.members) listed.push_back(member.group_rank);
    CHECK(listed == KnownRanks(result.group_rank, kHosts));  // 8 of 64, not 64
  }
  CHECK(ranks.size() == kHosts);
  const AfterJoin after = ReadAfterJoin(io, server.port());
  const std::optional<RendezvousState>& decoded = after.state;
  REQUIRE(decoded);
  CHECK(decoded->complete);
  CHECK(decoded->admitted == kHosts);
  CHECK(decoded->version < kHosts / 4);  // batches, not one write per host
}

TEST_CASE_METHOD(
    DynamicJob,
    "Dynamic rendezvous: an elastic round of many hosts completes at its last call in one "
    "write, and nobody reads the whole state",
    "[rendezvous][dynamic]") {
  constexpr int kHosts = 48;
  // MIN is reached by the first batches, MAX never: the last call (300 ms) completes the round.
  for (int id = 0; id < kHosts; ++id) {
    auto settings = Settings(server.port(), id, 2, 2 * kHosts);
    Join(settings);
  }
  const auto started = Clock::now();
  testing::RunUntilAllDone(io, results, 5000ms);
  CHECK(Clock::now() - started < 2000ms);
  for (const auto& outcome : results) {
    INFO(outcome->message());
    CHECK(outcome->get().group_world_size() == kHosts);
  }
  const AfterJoin after = ReadAfterJoin(io, server.port());
  const std::optional<RendezvousState>& decoded = after.state;
  REQUIRE(decoded);
  CHECK(decoded->complete);
  // A few batches, then one completing write: the participants did not each take a turn.
  CHECK(decoded->version < kHosts / 4);
  CHECK(after.tickets == 0);  // the turn queue was never used
}

// Round 0 of a 3-host job (--nnodes=MIN:3) with a spare waiting in the state, then the member at
// group rank 1 lost (its connection closed, as a SIGKILLed agent's); the survivors' outcomes of
// the round after it are survivors.
struct LostMember : DynamicJob {
  Results survivors;
  std::vector<RendezvousResult> first;
  AfterJoin before;  // once the spare waits

  void Run(int min_nodes, bool spare_dies) {
    for (int id = 0; id < 3; ++id) Join(Settings(server.port(), id, min_nodes, 3));
    testing::RunUntilAllDone(io, results, 5000ms);
    for (const auto& outcome : results) first.push_back(outcome->get());
    Join(Settings(server.port(), 3, min_nodes, 3));  // the spare
    for (const auto until = Clock::now() + 3s; Clock::now() < until;) {
      before = ReadAfterJoin(io, server.port());
      if (before.state && before.state->spares.size() == 1) break;
    }
    REQUIRE(before.state->spares.size() == 1);
    if (spare_dies) agents[3]->Cancel();  // still listed: nothing told the state
    for (size_t i = 0; i < 3; ++i) {
      if (first[i].group_rank == 1) {
        agents[i]->Cancel();
        continue;
      }
      const RoundTransition lost{0, 0, true, 1, -1};
      survivors.push_back(Spawn(io, agents[i]->Next(lost)));
    }
    testing::RunUntilAllDone(io, survivors, 5000ms);
  }
};

TEST_CASE_METHOD(LostMember,
                 "Dynamic rendezvous: after a lost host one survivor forms the next round with "
                 "the spare in its seat, and nobody joins again",
                 "[rendezvous][dynamic][spares]") {
  Run(3, false);
  for (const auto& outcome : survivors) {
    INFO(outcome->message());
    const RendezvousResult next = outcome->get();
    CHECK(next.round == 1);
    CHECK(next.restart_count == 1);
    CHECK(next.group_world_size() == 3);
    CHECK(next.Member(1).node.hostname == "host3");  // the spare in the lost seat
  }
  RunUntil(
      io, [&] { return results[3]->done; }, 3000ms);
  INFO(results[3]->message());
  CHECK(results[3]->get().group_rank == 1);
  const AfterJoin after = ReadAfterJoin(io, server.port());
  REQUIRE(after.state);
  CHECK(after.state->round == 1);
  CHECK(after.state->admitted == before.state->admitted);  // no survivor queued a join
  CHECK(after.tickets == before.tickets);                  // nor took a write turn
}

TEST_CASE_METHOD(LostMember,
                 "Dynamic rendezvous: with its only spare dead, the survivors join the next round "
                 "as without one",
                 "[rendezvous][dynamic][spares]") {
  Run(2, true);  // --nnodes=2:3: the two survivors complete the round at its last call
  std::set<int> ranks;
  for (const auto& outcome : survivors) {
    INFO(outcome->message());
    const RendezvousResult next = outcome->get();
    CHECK(next.round == 1);
    CHECK(next.group_world_size() == 2);
    ranks.insert(next.group_rank);
  }
  CHECK(ranks == std::set<int>{0, 1});
  const AfterJoin after = ReadAfterJoin(io, server.port());
  REQUIRE(after.state);
  CHECK(after.state->spares.empty());  // the dead spare is no longer counted on
}

}  // namespace
}  // namespace cpplaunch
