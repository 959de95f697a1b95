// EtcdRendezvous and EtcdJobChannel against a real single-member etcd (EtcdTestCluster starts
// it through tests/etcd/etcd_cluster.py; exit 77 when etcd is not installed). Several agents
// share one io_context here, each with its own link (client and lease), as separate hosts would.

#include "rendezvous/etcd/etcd_rendezvous.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/core/round_assignment.h"
#include "rendezvous/etcd/etcd_job_channel.h"
#include "rendezvous/etcd/etcd_keys.h"
#include "tests/etcd_client/etcd_test_cluster.h"

namespace cpplaunch {
namespace {

using etcd::testing::EtcdTestCluster;
using etcd::testing::RunUntil;
using std::chrono::milliseconds;

EtcdTestCluster& Cluster() {
  static EtcdTestCluster cluster(1);
  return cluster;
}

std::string NewRunId() {
  static int counter = 0;
  return "rdzv-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

// What a test may change of an agent's settings.
struct Tuning {
  etcd::ClientSettings client = Cluster().Settings();
  milliseconds join_timeout{20000};
  milliseconds queue_timeout{5000};
  std::chrono::seconds lease_ttl{2};  // etcd's minimum
  // Beyond every test's limit: what a waiting agent hears must come from a watch event (an
  // epoch step carries the summary), not from a progress line's read.
  std::chrono::seconds progress_interval{60};
};

// One agent: its link (client and lease) and rendezvous.
struct Agent {
  Agent(boost::asio::io_context& io, const std::string& run_id, int index, int min_nodes,
        int max_nodes, Tuning tuning = {}) {
    EtcdSettings etcd;
    etcd.client = std::move(tuning.client);
    etcd.lease_ttl = tuning.lease_ttl;
    etcd.offer_store_port = [index] { return 40000 + index; };
    link = std::make_shared<EtcdLink>(io.get_executor(), etcd, run_id);
    RendezvousSettings s;
    s.run_id = run_id;
    s.min_nodes = min_nodes;
    s.max_nodes = max_nodes;
    s.self.node_id = "_" + std::to_string(index);
    s.self.hostname = "host" + std::to_string(index);
    s.self.local_world_size = 2;
    s.self.nnodes_min = min_nodes;
    s.self.nnodes_max = max_nodes;
    s.join_timeout = tuning.join_timeout;
    s.queue_timeout = tuning.queue_timeout;
    s.last_call_timeout = milliseconds(300);
    s.close_timeout = std::chrono::seconds(5);
    s.progress_interval = tuning.progress_interval;
    rendezvous = std::make_unique<EtcdRendezvous>(io.get_executor(), s, link);
  }
  std::shared_ptr<EtcdLink> link;
  std::unique_ptr<EtcdRendezvous> rendezvous;
};

template <class T>
T Get(boost::asio::io_context& io, std::future<T>& future,
      milliseconds limit = milliseconds(20000)) {
  REQUIRE(RunUntil(
      io, [&] { return future.wait_for(milliseconds(0)) == std::future_status::ready; }, limit));
  return future.get();
}

std::future<RendezvousResult> Join(boost::asio::io_context& io, Agent& agent,
                                   std::optional<RoundTransition> previous = std::nullopt) {
  return boost::asio::co_spawn(io, agent.rendezvous->Next(previous), boost::asio::use_future);
}

// A full job of `count` agents with indices 1..count (--nnodes=count), after its first round:
// the agents go to *members, their results come back in the same order.
std::vector<RendezvousResult> JoinFullJob(boost::asio::io_context& io, const std::string& run,
                                          int count, std::vector<std::unique_ptr<Agent>>* members) {
  std::vector<std::future<RendezvousResult>> joins;
  for (int i = 1; i <= count; ++i) {
    members->push_back(std::make_unique<Agent>(io, run, i, count, count));
  }
  for (auto& agent : *members) joins.push_back(Join(io, *agent));
  std::vector<RendezvousResult> results;
  for (auto& join : joins) results.push_back(Get(io, join));
  return results;
}

// Two agents of a new run (--nnodes=2) that completed its first round together: ra and rb.
struct JoinedPair {
  JoinedPair() {
    auto ja = Join(io, a);
    auto jb = Join(io, b);
    ra = Get(io, ja);
    rb = Get(io, jb);
  }
  boost::asio::io_context io;
  const std::string run = NewRunId();
  Agent a{io, run, 0, 2, 2};
  Agent b{io, run, 1, 2, 2};
  RendezvousResult ra;
  RendezvousResult rb;
};

// The repro: two agents behind one address, each PID 1 of its container, once had one
// node id, shared one node record and one place (the worker stores of two group ranks 0 then
// collided: "Address already in use"). The second to connect now stops in one line.
TEST_CASE("etcd rendezvous: a second agent with a node id already joined stops in one line") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  Agent a(io, run, 7, 1, 2);
  Agent b(io, run, 7, 1, 2);  // the same node id: "<addr>_7"
  auto ja = Join(io, a);
  CHECK(Get(io, ja).group_world_size() == 1);
  auto jb = Join(io, b);
  try {
    Get(io, jb);
    FAIL("the second agent with one node id joined");
  } catch (const RendezvousError& error) {
    const std::string line = error.what();
    CHECK_THAT(line, Catch::StartsWith("rendezvous failed on host7 at ") &&
                         Catch::Contains("another agent of job '" + run +
                                         "' already joined as "
                                         "node ") &&
                         Catch::EndsWith("start this agent again to draw a new node id"));
    CHECK(line.find('\n') == std::string::npos);
  }
}

TEST_CASE("etcd rendezvous: MAX agents complete one round with distinct ranks") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  std::vector<std::unique_ptr<Agent>> agents;
  std::vector<std::future<RendezvousResult>> joins;
  for (int i = 0; i < 3; ++i) agents.push_back(std::make_unique<Agent>(io, run, i, 2, 3));
  for (auto& agent : agents) joins.push_back(Join(io, *agent));
  std::set<int> ranks;
  std::vector<RendezvousResult> results;
  for (auto& join : joins) results.push_back(Get(io, join));
  for (const auto& r : results) {
    ranks.insert(r.group_rank);
    CHECK(r.round == 0);
    CHECK(r.restart_count == 0);
    CHECK(r.group_world_size() == 3);
    REQUIRE(r.members.size() == 3);  // its peers: every member of a round of 3
    for (int rank = 0; rank < 3; ++rank) {
      CHECK(r.Member(rank).node == results.front().Member(rank).node);
    }
    // Group rank 0's agent hosts the workers' store on the port it offered.
    CHECK(r.master_addr == r.Member(0).node.addr);
    CHECK(r.master_port == r.Member(0).node.worker_store_port);
    CHECK(r.master_port >= 40000);
  }
  CHECK(ranks == std::set<int>{0, 1, 2});
  CHECK(results.front().Member(0).node.addr == "127.0.0.1");
  CHECK(results.front().Member(0).node.node_id.starts_with("127.0.0.1_"));
}

TEST_CASE("etcd rendezvous: MIN agents complete after the last call") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  Agent a(io, run, 0, 2, 3);
  Agent b(io, run, 1, 2, 3);
  auto started = std::chrono::steady_clock::now();
  auto ja = Join(io, a);
  auto jb = Join(io, b);
  RendezvousResult ra = Get(io, ja);
  RendezvousResult rb = Get(io, jb);
  CHECK(std::chrono::steady_clock::now() - started >= milliseconds(300));
  CHECK(ra.group_world_size() == 2);
  CHECK(ra.group_rank + rb.group_rank == 1);
}

// The keys under the run's inboxes (etcd_keys.h), read with a client of its own.
std::vector<etcd::KeyValue> Inboxes(boost::asio::io_context& io, const std::string& run) {
  etcd::Client reader(io.get_executor(), Cluster().Settings());
  const std::string prefix = EtcdKeys(kDefaultEtcdPrefix, run).Run() + "inbox/";
  auto range = boost::asio::co_spawn(io, reader.Range(prefix, etcd::PrefixEnd(prefix)),
                                     boost::asio::use_future);
  return Get(io, range).kvs;
}

TEST_CASE("etcd rendezvous: a participant admitted earlier hears the last call in its inbox") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  Agent a(io, run, 0, 2, 3);
  Agent b(io, run, 1, 2, 3);
  auto ja = Join(io, a);
  // a is admitted alone (below MIN, no last call yet) before b comes.
  REQUIRE(RunUntil(
      io, [&] { return !Inboxes(io, run).empty(); }, milliseconds(10000)));
  auto jb = Join(io, b);
  RendezvousResult ra = Get(io, ja);
  RendezvousResult rb = Get(io, jb);
  CHECK(ra.group_world_size() == 2);
  const EtcdKeys keys(kDefaultEtcdPrefix, run);
  std::optional<StateSummary> step_a;
  bool step_b = false;
  for (const auto& kv : Inboxes(io, run)) {
    std::string error;
    if (kv.key == keys.EpochStep(ra.self().node_id)) step_a = DecodeSummary(kv.value, &error);
    if (kv.key == keys.EpochStep(rb.self().node_id)) step_b = true;
  }
  // The step that armed the last call went to a; b's answer in the same write carried it.
  REQUIRE(step_a);
  CHECK(step_a->state.last_call_deadline_ms != 0);
  CHECK(step_a->joined == 2);
  CHECK_FALSE(step_b);
}

TEST_CASE("etcd rendezvous: waiting participants hear at once that the job closed") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  Agent a(io, run, 0, 3, 3);
  Agent b(io, run, 1, 3, 3);
  auto ja = Join(io, a);
  auto jb = Join(io, b);
  REQUIRE(RunUntil(
      io, [&] { return Inboxes(io, run).size() >= 2; }, milliseconds(10000)));
  const auto started = std::chrono::steady_clock::now();
  auto close =
      boost::asio::co_spawn(io, b.rendezvous->Close("host1 failed"), boost::asio::use_future);
  Get(io, close);
  // Progress lines come every 60 s here: only the inbox can have told a this soon.
  REQUIRE(RunUntil(
      io, [&] { return ja.wait_for(milliseconds(0)) == std::future_status::ready; },
      milliseconds(5000)));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
  CHECK_THROWS_WITH(ja.get(), Catch::Contains("closed") && Catch::Contains("host1 failed"));
  REQUIRE(RunUntil(
      io, [&] { return jb.wait_for(milliseconds(0)) == std::future_status::ready; },
      milliseconds(5000)));
  CHECK_THROWS(jb.get());
}

TEST_CASE("etcd rendezvous: the admitter's lease expiring lets a queued agent take over") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  // An admitter that died holding the key: its lease (etcd's minimum TTL) is kept alive by nobody.
  etcd::Client dead(io.get_executor(), Cluster().Settings());
  const EtcdKeys keys(kDefaultEtcdPrefix, run);
  auto grant =
      boost::asio::co_spawn(io, dead.GrantLease(std::chrono::seconds(2)), boost::asio::use_future);
  const int64_t lease = Get(io, grant);
  auto put = boost::asio::co_spawn(io, dead.Put(keys.Admitter(), "10.0.0.9_1", lease),
                                   boost::asio::use_future);
  Get(io, put);
  // No hand-over to the decide-join loop within the test: only a takeover completes the round.
  const milliseconds never(60000);
  Agent a(io, run, 0, 2, 2, {.queue_timeout = never});
  Agent b(io, run, 1, 2, 2, {.queue_timeout = never});
  const auto started = std::chrono::steady_clock::now();
  auto ja = Join(io, a);
  auto jb = Join(io, b);
  RendezvousResult ra = Get(io, ja);
  RendezvousResult rb = Get(io, jb);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(8));
  CHECK(ra.group_rank + rb.group_rank == 1);
  CHECK(ra.group_world_size() == 2);
  // The key is free again once the queue is drained.
  auto held = boost::asio::co_spawn(io, dead.Range(keys.Admitter()), boost::asio::use_future);
  CHECK(Get(io, held).kvs.empty());
}

TEST_CASE("etcd rendezvous: a round completes with only its assignment and peers' records") {
  // Enough members that each knows only some: group ranks 0, its own and its heartbeat peers.
  boost::asio::io_context io;
  const std::string run = NewRunId();
  constexpr int kMembers = 12;
  std::vector<std::unique_ptr<Agent>> agents;
  std::vector<std::future<RendezvousResult>> joins;
  for (int i = 0; i < kMembers; ++i) {
    agents.push_back(std::make_unique<Agent>(io, run, i, kMembers, kMembers));
  }
  for (auto& agent : agents) joins.push_back(Join(io, *agent));
  std::set<int> ranks;
  for (auto& join : joins) {
    RendezvousResult r = Get(io, join);
    ranks.insert(r.group_rank);
    CHECK(r.group_world_size() == kMembers);
    CHECK(r.world_size == 2 * kMembers);
    CHECK(r.base_rank == 2 * r.group_rank);
    CHECK(r.members.size() < static_cast<size_t>(kMembers));
    std::vector<int> listed;
    for (const auto& member : r.members) listed.push_back(member.group_rank);
    CHECK(listed == KnownRanks(r.group_rank, kMembers));
    CHECK(r.master_addr == r.Member(0).node.addr);
    CHECK(r.master_port == r.Member(0).node.worker_store_port);
  }
  CHECK(ranks.size() == static_cast<size_t>(kMembers));
}

TEST_CASE_METHOD(JoinedPair,
                 "etcd job channel: the first round end wins on every agent; the exit barrier") {
  std::optional<RoundEnd> heard_a, heard_b;
  EtcdJobChannel ca(io.get_executor(), a.link, ra, [&](const RoundEnd& e) { heard_a = e; });
  EtcdJobChannel cb(io.get_executor(), b.link, rb, [&](const RoundEnd& e) { heard_b = e; });
  auto sa = boost::asio::co_spawn(io, ca.Start(), boost::asio::use_future);
  auto sb = boost::asio::co_spawn(io, cb.Start(), boost::asio::use_future);
  Get(io, sa);
  Get(io, sb);

  SECTION("round end") {
    RoundEnd first;
    first.kind = RoundEndKind::kWorkerFailure;
    first.host = "host0";
    first.rank = 1;
    first.detail = "exitcode 3";
    RoundEnd second = first;
    second.host = "host1";
    auto ea = boost::asio::co_spawn(io, ca.EndRound(first), boost::asio::use_future);
    CHECK(Get(io, ea) == first);
    auto eb = boost::asio::co_spawn(io, cb.EndRound(second), boost::asio::use_future);
    CHECK(Get(io, eb) == first);  // the root cause, not the later notice
    REQUIRE(RunUntil(
        io, [&] { return heard_a && heard_b; }, milliseconds(5000)));
    CHECK(*heard_a == first);
    CHECK(*heard_b == first);
  }
  SECTION("exit barrier") {
    auto ba =
        boost::asio::co_spawn(io, ca.ExitBarrier(milliseconds(5000)), boost::asio::use_future);
    auto bb =
        boost::asio::co_spawn(io, cb.ExitBarrier(milliseconds(5000)), boost::asio::use_future);
    CHECK(Get(io, ba));
    CHECK(Get(io, bb));
    // Past the barrier a peer may leave: its lease revoked is not a lost peer.
    auto revoke = boost::asio::co_spawn(io, a.rendezvous->Disarm(), boost::asio::use_future);
    Get(io, revoke);
    RunUntil(
        io, [] { return false; }, milliseconds(300));
    CHECK_FALSE(heard_b);
  }
  ca.Stop();
  cb.Stop();
}

TEST_CASE_METHOD(JoinedPair,
                 "etcd job channel: a member whose lease expires ends the round as a lost peer") {
  std::optional<RoundEnd> heard;
  EtcdJobChannel cb(io.get_executor(), b.link, rb, [&](const RoundEnd& e) { heard = e; });
  auto sb = boost::asio::co_spawn(io, cb.Start(), boost::asio::use_future);
  Get(io, sb);
  auto died = std::chrono::steady_clock::now();
  a.link->Close();  // a dies: nobody keeps its lease alive any more
  REQUIRE(RunUntil(
      io, [&] { return heard.has_value(); }, milliseconds(10000)));
  CHECK(std::chrono::steady_clock::now() - died < std::chrono::seconds(6));
  CHECK(heard->kind == RoundEndKind::kPeerLost);
  CHECK(heard->node_rank == ra.group_rank);
  CHECK(heard->host == "host0");
  cb.Stop();

  // The survivor forms the next round alone when MIN allows it: here a newcomer joins it.
  Agent c(io, run, 2, 2, 2);
  auto jb2 = Join(io, b, RoundTransition{rb.round, rb.restart_count, true});
  auto jc = Join(io, c);
  RendezvousResult next = Get(io, jb2);
  Get(io, jc);
  CHECK(next.round == rb.round + 1);
  CHECK(next.restart_count == 1);
  CHECK(next.group_world_size() == 2);
}

TEST_CASE("etcd job channel: a lost member is named on every member, whether it lists it or not") {
  // 12 members: each lists group rank 0, itself and its heartbeat peers; group rank 7 is listed
  // by 3, 5, 6 and 11 only (its ring predecessors), the others hear of it through the round end.
  boost::asio::io_context io;
  const std::string run = NewRunId();
  constexpr int kMembers = 12;
  constexpr int kLost = 7;
  std::vector<std::unique_ptr<Agent>> agents;
  std::vector<std::future<RendezvousResult>> joins;
  for (int i = 0; i < kMembers; ++i) {
    agents.push_back(std::make_unique<Agent>(io, run, i, kMembers, kMembers));
  }
  for (auto& agent : agents) joins.push_back(Join(io, *agent));
  std::vector<RendezvousResult> results;
  for (auto& join : joins) results.push_back(Get(io, join));
  std::vector<std::optional<RoundEnd>> heard(kMembers);
  std::vector<std::unique_ptr<EtcdJobChannel>> channels(kMembers);
  size_t lost = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].group_rank == kLost) {
      lost = i;
      continue;
    }
    channels[i] =
        std::make_unique<EtcdJobChannel>(io.get_executor(), agents[i]->link, results[i],
                                         [&heard, i](const RoundEnd& e) { heard[i] = e; });
    auto started = boost::asio::co_spawn(io, channels[i]->Start(), boost::asio::use_future);
    Get(io, started);
  }
  CHECK(results[lost].Find(kLost) != nullptr);
  agents[lost]->link->Close();  // it dies: nobody keeps its lease alive any more
  auto all_heard = [&] {
    for (size_t i = 0; i < heard.size(); ++i) {
      if (i != lost && !heard[i]) return false;
    }
    return true;
  };
  REQUIRE(RunUntil(io, all_heard, milliseconds(10000)));
  int unlisted = 0;
  for (size_t i = 0; i < heard.size(); ++i) {
    if (i == lost) continue;
    CHECK(heard[i]->kind == RoundEndKind::kPeerLost);
    CHECK(heard[i]->node_rank == kLost);
    if (results[i].Find(kLost) == nullptr) ++unlisted;
    channels[i]->Stop();
  }
  CHECK(unlisted > 0);
}

TEST_CASE("etcd rendezvous: a spare takes a lost host's group rank, survivors keep theirs") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  std::vector<std::unique_ptr<Agent>> members;
  const std::vector<RendezvousResult> first = JoinFullJob(io, run, 3, &members);
  // The spare (index 0) arrives at the full job and waits; its node id sorts first, so a fresh
  // sort would move every survivor.
  Agent spare(io, run, 0, 3, 3);
  auto js = Join(io, spare);
  REQUIRE_FALSE(RunUntil(
      io, [&] { return js.wait_for(milliseconds(0)) == std::future_status::ready; },
      milliseconds(500)));
  REQUIRE(first[1].group_rank == 1);
  members[1]->link->Close();  // group rank 1 dies; the others name its seat
  const RoundTransition lost{first[0].round, first[0].restart_count, true, 1};
  auto j0 = Join(io, *members[0], lost);
  auto j2 = Join(io, *members[2], lost);
  const RendezvousResult r0 = Get(io, j0);
  const RendezvousResult r2 = Get(io, j2);
  const RendezvousResult rs = Get(io, js);
  CHECK(r0.round == 1);
  CHECK(r0.restart_count == 1);
  CHECK(r0.group_rank == first[0].group_rank);
  CHECK(r2.group_rank == first[2].group_rank);
  CHECK(rs.group_rank == 1);
  CHECK(rs.base_rank == first[1].base_rank);
  CHECK(rs.Member(1).node.hostname == "host0");
  CHECK(r0.Member(1).node.hostname == "host0");
}

// etcd's count of Range requests served (its /metrics), read with a plain HTTP/1.0 GET.
double RangeRequestsServed() {
  const etcd::Endpoint& member = Cluster().endpoints.front();
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect(
      {boost::asio::ip::make_address(member.host), static_cast<unsigned short>(member.port)});
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + member.host + "\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(request));
  std::string text;
  boost::system::error_code ec;
  boost::asio::read(socket, boost::asio::dynamic_buffer(text), ec);  // until etcd closes it
  double served = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("grpc_server_handled_total{", 0) == 0 &&
        line.find("grpc_method=\"Range\"") != std::string::npos) {
      served += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return served;
}

TEST_CASE("etcd rendezvous: an agent waiting in the decide-join loop reads no state per change") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  std::vector<std::unique_ptr<Agent>> members;
  JoinFullJob(io, run, 2, &members);
  // The job is full: the spare's queued join is not admitted, and it waits in the loop.
  Agent spare(io, run, 0, 2, 2);
  auto js = Join(io, spare);
  etcd::Client writer(io.get_executor(), Cluster().Settings());
  const EtcdKeys keys(kDefaultEtcdPrefix, run);
  auto read_state = [&] {
    const etcd::RangeResult range = etcd::testing::RunTask(io, writer.Range(keys.State()));
    REQUIRE(range.kvs.size() == 1);
    std::string error;
    auto state = RendezvousState::Decode(range.kvs.front().value, &error);
    REQUIRE(state);
    return *state;
  };
  REQUIRE(RunUntil(
      io, [&] { return read_state().spares.size() == 1; }, milliseconds(10000)));
  // Writes of the state that leave the spare waiting: each wakes it with the new state.
  constexpr int kChanges = 10;
  const double before = RangeRequestsServed();
  for (int i = 0; i < kChanges; ++i) {
    RendezvousState state = read_state();
    ++state.version;
    etcd::testing::RunTask(io, writer.Put(keys.State(), state.Encode()));
    REQUIRE_FALSE(RunUntil(
        io, [&] { return js.wait_for(milliseconds(0)) == std::future_status::ready; },
        milliseconds(100)));
  }
  // The test's own reads, one per change; the spare read the state after each change before.
  CHECK(RangeRequestsServed() - before < kChanges + kChanges / 2);
  // The spare still decides on what the watch brings: the job's end lets it go.
  auto close = boost::asio::co_spawn(io, members[0]->rendezvous->Close(std::string(kJobFinished)),
                                     boost::asio::use_future);
  Get(io, close);
  REQUIRE(RunUntil(
      io, [&] { return js.wait_for(milliseconds(0)) == std::future_status::ready; },
      milliseconds(5000)));
  CHECK_THROWS_AS(js.get(), RendezvousNotNeeded);
}

TEST_CASE("etcd rendezvous: waiting agents ride out an etcd restart, then complete the round") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  // Leases that outlive the outage (etcd keeps them over its restart); a request's bound (5 s)
  // does not: the waiting agents' progress reads, every second, fail meanwhile.
  auto agent = [&](int index) {
    return std::make_unique<Agent>(io, run, index, 3, 3,
                                   Tuning{.join_timeout = milliseconds(60000),
                                          .lease_ttl = std::chrono::seconds(30),
                                          .progress_interval = std::chrono::seconds(1)});
  };
  auto a = agent(0);
  auto b = agent(1);
  auto ja = Join(io, *a);
  auto jb = Join(io, *b);
  auto either_ended = [&] {
    return ja.wait_for(milliseconds(0)) == std::future_status::ready ||
           jb.wait_for(milliseconds(0)) == std::future_status::ready;
  };
  REQUIRE_FALSE(RunUntil(io, either_ended, milliseconds(1000)));
  Cluster().Stop(0);
  REQUIRE_FALSE(RunUntil(io, either_ended, milliseconds(7000)));
  Cluster().Start(0);
  auto c = agent(2);
  auto jc = Join(io, *c);
  std::set<int> ranks;
  for (auto* join : {&ja, &jb, &jc}) {
    const RendezvousResult r = Get(io, *join, milliseconds(40000));
    CHECK(r.group_world_size() == 3);
    ranks.insert(r.group_rank);
  }
  CHECK(ranks == std::set<int>{0, 1, 2});
}

TEST_CASE("etcd rendezvous: a closed job admits nobody") {
  boost::asio::io_context io;
  const std::string run = NewRunId();
  Agent a(io, run, 0, 1, 2);
  auto ja = Join(io, a);
  Get(io, ja);
  auto close =
      boost::asio::co_spawn(io, a.rendezvous->Close("the job finished"), boost::asio::use_future);
  Get(io, close);
  Agent late(io, run, 1, 1, 2);
  auto jl = Join(io, late);
  REQUIRE(RunUntil(
      io, [&] { return jl.wait_for(milliseconds(0)) == std::future_status::ready; },
      milliseconds(10000)));
  // Issue 27: the refusal says how to run the job again, naming the keys to clear.
  CHECK_THROWS_WITH(jl.get(), Catch::Contains("closed") && Catch::Contains("the job finished") &&
                                  Catch::Contains("another --rdzv-id, or clear the old one: "
                                                  "etcdctl --endpoints=") &&
                                  Catch::EndsWith(" del --prefix /cpplaunch/rdzv/" + run + "/"));
}

TEST_CASE("etcd rendezvous: no member answers: one error naming the endpoints, in time") {
  boost::asio::io_context io;
  etcd::ClientSettings nowhere = Cluster().Settings();
  nowhere.endpoints = {etcd::Endpoint{"127.0.0.1", 9}, etcd::Endpoint{"127.0.0.1", 7}};
  nowhere.https = false;
  Agent a(io, NewRunId(), 0, 1, 1, {.client = nowhere, .join_timeout = milliseconds(2000)});
  auto started = std::chrono::steady_clock::now();
  auto ja = Join(io, a);
  REQUIRE(RunUntil(
      io, [&] { return ja.wait_for(milliseconds(0)) == std::future_status::ready; },
      milliseconds(30000)));
  CHECK_THROWS_WITH(ja.get(), Catch::Contains("127.0.0.1:9,127.0.0.1:7"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(8));
}

}  // namespace
}  // namespace cpplaunch
