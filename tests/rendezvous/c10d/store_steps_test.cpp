#include "rendezvous/c10d/store_steps.h"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/rendezvous/rendezvous_test_support.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = AsyncStoreClient::Clock;
using testing::RunUntil;
using testing::SpawnBody;

TEST_CASE("FormatSeconds rounds long durations to seconds", "[rendezvous][store_steps]") {
  CHECK(FormatSeconds(12400ms) == "12 s");
  CHECK(FormatSeconds(1500ms) == "1.5 s");
  CHECK(FormatSeconds(-3s) == "0.0 s");
}

TEST_CASE("Round keys live under the run's agent prefix", "[rendezvous][store_steps]") {
  CHECK(GoKey("job", 2) == "cpplaunch/job/r2/go");
  CHECK(EndKey("job", 0) == "cpplaunch/job/r0/end");
  CHECK(rendezvous_keys::Heartbeat("job", "10.0.0.1_7") == "cpplaunch/job/hb/10.0.0.1_7");
}

// Two agents' clients and a worker's (PyTorch side) connected to a StoreServer on 127.0.0.1,
// driven on one io_context.
struct Fixture {
  asio::io_context io;
  StoreServer server{io, testing::LoopbackServer()};
  AsyncStoreClient a{io.get_executor(), AsyncStoreClient::Options::Agent(5s, "")};
  AsyncStoreClient b{io.get_executor(), AsyncStoreClient::Options::Agent(5s, "")};
  AsyncStoreClient worker{io.get_executor()};

  Fixture() {
    auto connected = SpawnBody(io, [this]() -> asio::awaitable<void> {
      co_await a.Connect("127.0.0.1", server.port(), Clock::now() + 5s);
      co_await b.Connect("127.0.0.1", server.port(), Clock::now() + 5s);
      co_await worker.Connect("127.0.0.1", server.port(), Clock::now() + 5s);
    });
    RunUntil(
        io, [&] { return connected->done; }, 5000ms);
    connected->get();
  }
};

// The end notice of job 'job''s round `round` in f's store; nullopt when it is missing or does
// not decode.
std::optional<RoundEnd> ReadRoundEnd(Fixture& f, int64_t round) {
  auto end = SpawnBody(f.io, [&]() -> asio::awaitable<std::optional<Bytes>> {
    co_return co_await ReadIfPresent(f.a, EndKey("job", round));
  });
  RunUntil(
      f.io, [&] { return end->done; }, 5000ms);
  auto value = end->get();
  if (!value) return std::nullopt;
  std::string error;
  return RoundEnd::Decode(*value, &error);
}

// Round 0 of `count` members, as group rank `rank` sees it.
RendezvousResult Members(int count, int rank) {
  std::vector<NodeInfo> nodes;
  std::vector<std::string> liveness_keys;
  for (int i = 0; i < count; ++i) {
    NodeInfo node;
    node.node_id = "n" + std::to_string(i);
    node.hostname = "host" + std::to_string(i);
    node.local_world_size = 1;
    nodes.push_back(node);
    liveness_keys.push_back("cpplaunch/job/alive/n" + std::to_string(i));
  }
  RendezvousResult result;
  result.group_rank = rank;
  SetEveryMember(&result, std::move(nodes), liveness_keys);
  return result;
}

TEST_CASE("ArmRound: every member armed, everybody goes on", "[rendezvous][store_steps]") {
  Fixture f;
  const auto round_a = Members(2, 0);
  const auto round_b = Members(2, 1);
  auto a = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    co_await ArmRound(f.a, "job", round_a, Clock::now() + 3s, "timeout");
  });
  auto b = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    co_await ArmRound(f.b, "job", round_b, Clock::now() + 3s, "timeout");
  });
  RunUntil(
      f.io, [&] { return a->done && b->done; }, 5000ms);
  CHECK(a->message() == "");
  CHECK(b->message() == "");
  auto end = SpawnBody(f.io, [&]() -> asio::awaitable<std::optional<Bytes>> {
    co_return co_await ReadIfPresent(f.a, EndKey("job", 0));
  });
  RunUntil(
      f.io, [&] { return end->done; }, 5000ms);
  CHECK_FALSE(end->get());  // nobody ended the round
}

TEST_CASE("ArmRound: a member that died before arming is found by the member before it",
          "[rendezvous][store_steps]") {
  // Of 3 members, rank 2 never arms and holds no liveness key (its agent died after the round
  // completed). Rank 1, just before it on the ring, ends the round naming it; rank 0 returns too.
  Fixture f;
  const auto round_a = Members(3, 0);
  const auto round_b = Members(3, 1);
  const auto started = Clock::now();
  auto r0 = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    co_await ArmRound(f.a, "job", round_a, Clock::now() + 3s, "timeout");
  });
  auto r1 = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    co_await ArmRound(f.b, "job", round_b, Clock::now() + 3s, "timeout");
  });
  RunUntil(
      f.io, [&] { return r0->done && r1->done; }, 5000ms);
  CHECK(r0->message() == "");
  CHECK(r1->message() == "");
  CHECK(Clock::now() - started < 1s);
  const std::optional<RoundEnd> notice = ReadRoundEnd(f, 0);
  REQUIRE(notice);
  CHECK(notice->kind == RoundEndKind::kPeerLost);
  CHECK(notice->node_rank == 2);
  CHECK(notice->host == "host2");
  CHECK_THAT(notice->detail, Catch::Contains("during the rendezvous of round 0"));
}

// Issue 23 item 4: a member that queued its join, was counted, then froze (SIGSTOP, a cut
// network) keeps its connection, hence its liveness key; only its heartbeats tell.
ArmWatch ShortWatch(std::vector<std::string>* lines) {
  ArmWatch watch;
  watch.round_text = "round 0 of job 'job'";
  watch.silent_limit = 400ms;
  watch.beat_interval = 50ms;
  watch.lost_kind = RoundEndKind::kMemberDropped;
  watch.progress_interval = 100ms;
  watch.progress = [lines](const std::string& line) { lines->push_back(line); };
  return watch;
}

TEST_CASE("ArmRound: a connected member that neither arms nor beats is lost after the limit",
          "[rendezvous][store_steps]") {
  Fixture f;
  const auto round_a = Members(3, 0);
  const auto round_b = Members(3, 1);
  std::vector<std::string> lines;
  const ArmWatch watch = ShortWatch(&lines);
  std::vector<ArmOutcome> outcomes;
  const auto started = Clock::now();
  auto r0 = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    co_await f.a.Set("cpplaunch/job/alive/n2", "n2");  // its connection holds it: still there
    outcomes.push_back(co_await ArmRound(f.a, "job", round_a, Clock::now() + 5s, "timeout", watch));
  });
  auto r1 = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    outcomes.push_back(co_await ArmRound(f.b, "job", round_b, Clock::now() + 5s, "timeout", watch));
  });
  RunUntil(
      f.io, [&] { return r0->done && r1->done; }, 8000ms);
  CHECK(r0->message() == "");
  CHECK(r1->message() == "");
  const auto took = Clock::now() - started;
  CHECK(took >= 400ms);
  CHECK(took < 2s);
  CHECK(outcomes == std::vector<ArmOutcome>{ArmOutcome::kEnded, ArmOutcome::kEnded});
  const std::optional<RoundEnd> notice = ReadRoundEnd(f, 0);
  REQUIRE(notice);
  CHECK(notice->kind == RoundEndKind::kMemberDropped);
  CHECK(notice->node_rank == 2);
  CHECK(notice->host == "host2");
  CHECK_THAT(notice->detail, Catch::Contains("its agent n2 sent no heartbeat for"));
  REQUIRE_FALSE(lines.empty());
  CHECK_THAT(lines.front(), Catch::Contains("round 0 of job 'job': 2 of 3 hosts armed the round") &&
                                Catch::Contains("a host silent for 0.4 s is dropped"));
}

TEST_CASE("ArmRound: a member that arms late but beats meanwhile is waited for",
          "[rendezvous][store_steps]") {
  Fixture f;
  AsyncStoreClient c{f.io.get_executor(), AsyncStoreClient::Options::Agent(5s, "")};
  const auto round_a = Members(3, 0);
  const auto round_b = Members(3, 1);
  const auto round_c = Members(3, 2);
  std::vector<std::string> lines;
  const ArmWatch watch = ShortWatch(&lines);
  std::vector<ArmOutcome> outcomes;
  auto late = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    co_await c.Connect("127.0.0.1", f.server.port(), Clock::now() + 5s);
    co_await c.Set("cpplaunch/job/alive/n2", "n2");
    asio::steady_timer timer(f.io);
    for (int beat = 0; beat < 12; ++beat) {  // 1.2 s of heartbeats, 3 x the limit, then arms
      co_await c.Add(rendezvous_keys::Heartbeat("job", "n2"), 1);
      timer.expires_after(100ms);
      co_await timer.async_wait(asio::use_awaitable);
    }
    outcomes.push_back(co_await ArmRound(c, "job", round_c, Clock::now() + 5s, "timeout", watch));
  });
  auto r0 = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    outcomes.push_back(co_await ArmRound(f.a, "job", round_a, Clock::now() + 5s, "timeout", watch));
  });
  auto r1 = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    outcomes.push_back(co_await ArmRound(f.b, "job", round_b, Clock::now() + 5s, "timeout", watch));
  });
  RunUntil(
      f.io, [&] { return late->done && r0->done && r1->done; }, 8000ms);
  CHECK(late->message() == "");
  CHECK(outcomes == std::vector<ArmOutcome>(3, ArmOutcome::kAllArmed));
}

TEST_CASE("PublishRoundEnd: the first notice of a round is everybody's",
          "[rendezvous][store_steps]") {
  Fixture f;
  RoundEnd first;
  first.host = "host0";
  first.detail = "exitcode 1";
  RoundEnd second = first;
  second.host = "host1";
  auto outcome = SpawnBody(f.io, [&]() -> asio::awaitable<std::vector<RoundEnd>> {
    std::vector<RoundEnd> ends;
    ends.push_back(co_await PublishRoundEnd(f.a, "job", 3, first));
    ends.push_back(co_await PublishRoundEnd(f.b, "job", 3, second));
    co_return ends;
  });
  RunUntil(
      f.io, [&] { return outcome->done; }, 5000ms);
  auto ends = outcome->get();
  CHECK(ends[0] == first);
  CHECK(ends[1] == first);
}

TEST_CASE("ClearWorkerKeys deletes the workers' keys however many, keeps the agents' and sets go",
          "[rendezvous][store_steps]") {
  Fixture f;
  // More keys than one LIST_KEYS reply may carry (131,072): clearing must not depend on listing.
  constexpr int kJunk = 140000;
  constexpr int kBatch = 10000;
  auto outcome = SpawnBody(f.io, [&]() -> asio::awaitable<std::vector<bool>> {
    co_await f.worker.Set("/worker/barrier", "1");
    for (int first = 0; first < kJunk; first += kBatch) {
      std::vector<std::string> keys;
      std::vector<Bytes> values;
      for (int i = first; i < first + kBatch; ++i) {
        keys.push_back("junk/" + std::to_string(i));
        values.push_back("j");
      }
      co_await f.worker.MultiSet(std::move(keys), std::move(values));
    }
    // MULTI_SET has no reply: a request with one makes sure the store holds every junk key before
    // another connection clears them.
    std::vector<std::string> last(1, "junk/139999");
    const bool stored = co_await f.worker.Check(std::move(last));
    co_await f.a.Set("cpplaunch/job/state", "s");
    co_await ClearWorkerKeys(f.a, "job", 1);
    // Keys are built outside co_await expressions: GCC 12 mis-compiles braced lists there.
    const std::vector<std::string> worker_keys{"/worker/barrier", "junk/0", "junk/139999"};
    const std::vector<std::string> agent_keys{"cpplaunch/job/state", "cpplaunch/job/r1/go"};
    std::vector<bool> present{stored};
    for (const std::string& key : worker_keys) {
      std::vector<std::string> one(1, key);
      present.push_back(co_await f.worker.Check(std::move(one)));
    }
    for (const std::string& key : agent_keys) {
      std::vector<std::string> one(1, key);
      present.push_back(co_await f.b.Check(std::move(one)));
    }
    co_return present;
  });
  RunUntil(
      f.io, [&] { return outcome->done; }, 20000ms);
  CHECK(outcome->get() == std::vector<bool>{true, false, false, false, true, true});
}

TEST_CASE("ReadIfPresent reads a key or says it is missing, keeping the connection",
          "[rendezvous][store_steps]") {
  Fixture f;
  auto outcome = SpawnBody(f.io, [&]() -> asio::awaitable<std::vector<std::optional<Bytes>>> {
    co_await f.a.Set("cpplaunch/job/here", "value");
    std::vector<std::optional<Bytes>> read;
    read.push_back(co_await ReadIfPresent(f.a, "cpplaunch/job/missing"));
    read.push_back(co_await ReadIfPresent(f.a, "cpplaunch/job/here"));
    co_return read;
  });
  RunUntil(
      f.io, [&] { return outcome->done; }, 5000ms);
  CHECK(outcome->get() == std::vector<std::optional<Bytes>>{std::nullopt, Bytes("value")});
}

TEST_CASE("WaitForKeys ticks between slices and gives up at the deadline",
          "[rendezvous][store_steps]") {
  Fixture f;
  int ticks = 0;
  auto outcome = SpawnBody(f.io, [&]() -> asio::awaitable<std::vector<bool>> {
    std::vector<bool> results;
    auto on_tick = [&]() -> asio::awaitable<void> {
      ++ticks;
      co_return;
    };
    std::vector<std::string> absent(1, "absent");
    std::vector<std::string> present(1, "present");
    results.push_back(co_await WaitForKeys(f.a, absent, Clock::now() + 120ms, 30ms, on_tick));
    co_await f.b.Set("present", "");
    results.push_back(co_await WaitForKeys(f.a, present, Clock::now() + 5s, 30ms, on_tick));
    co_return results;
  });
  RunUntil(
      f.io, [&] { return outcome->done; }, 5000ms);
  CHECK(outcome->get() == std::vector<bool>{false, true});
  CHECK(ticks >= 2);
}

TEST_CASE("ReleaseRound: round 0 neither clears nor waits", "[rendezvous][store_steps]") {
  Fixture f;
  auto outcome = SpawnBody(f.io, [&]() -> asio::awaitable<std::vector<bool>> {
    co_await f.worker.Set("/worker/barrier", "1");
    // Rank 1 with a deadline already passed: a wait would throw.
    co_await ReleaseRound(f.b, "job", 0, 1, Clock::now() - 1s, 30ms, "must not wait");
    co_await ReleaseRound(f.a, "job", 0, 0, Clock::now() + 5s, 30ms, "must not wait");
    std::vector<bool> present;
    std::vector<std::string> worker_key(1, "/worker/barrier");
    present.push_back(co_await f.worker.Check(std::move(worker_key)));
    std::vector<std::string> go(1, "cpplaunch/job/r0/go");
    present.push_back(co_await f.b.Check(std::move(go)));
    co_return present;
  });
  RunUntil(
      f.io, [&] { return outcome->done; }, 5000ms);
  CHECK(outcome->get() == std::vector<bool>{true, false});
}

TEST_CASE("ReleaseRound: rank 0 clears the workers' keys, then the others go",
          "[rendezvous][store_steps]") {
  Fixture f;
  std::vector<std::string> order;
  auto prepared = SpawnBody(
      f.io, [&]() -> asio::awaitable<void> { co_await f.worker.Set("/worker/barrier", "1"); });
  RunUntil(
      f.io, [&] { return prepared->done; }, 5000ms);
  prepared->get();
  auto waiter = SpawnBody(f.io, [&]() -> asio::awaitable<bool> {
    co_await ReleaseRound(f.b, "job", 2, 1, Clock::now() + 5s, 30ms, "not released");
    order.push_back("rank 1 released");
    std::vector<std::string> worker(1, "/worker/barrier");
    co_return co_await f.worker.Check(std::move(worker));
  });
  // Let rank 1 start waiting before rank 0 clears.
  RunUntil(
      f.io, [&] { return waiter->done; }, 100ms);
  CHECK_FALSE(waiter->done);
  auto releaser = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    order.push_back("rank 0 clears");
    co_await ReleaseRound(f.a, "job", 2, 0, Clock::now() + 5s, 30ms, "unused");
  });
  RunUntil(
      f.io, [&] { return waiter->done && releaser->done; }, 5000ms);
  releaser->get();
  CHECK(waiter->get() == false);
  CHECK(order == std::vector<std::string>{"rank 0 clears", "rank 1 released"});
}

TEST_CASE("ReleaseRound: a rank other than 0 throws the given message at the deadline",
          "[rendezvous][store_steps]") {
  Fixture f;
  auto outcome = SpawnBody(f.io, [&]() -> asio::awaitable<void> {
    co_await ReleaseRound(f.b, "job", 1, 2, Clock::now() + 100ms, 30ms,
                          "round 1 of job 'job': group rank 0 did not release the round");
  });
  RunUntil(
      f.io, [&] { return outcome->done; }, 5000ms);
  REQUIRE(outcome->done);
  CHECK_THROWS_AS(outcome->get(), RendezvousError);
  CHECK(outcome->message() == "round 1 of job 'job': group rank 0 did not release the round");
}

// A label over 63 characters fails in the local resolver (glibc builds no query for it), so
// the name is unresolvable without any DNS traffic leaving this host.
const std::string kUnresolvableName = std::string(70, 'x') + ".cpplaunch-test";

TEST_CASE("ConnectWithProgress: an unresolvable name is awaited, then one line names it",
          "[rendezvous][store_steps]") {
  asio::io_context io;
  AsyncStoreClient client(io.get_executor());
  std::vector<std::string> progress;
  const auto started = Clock::now();
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await ConnectWithProgress(client, kUnresolvableName, 29500, "node rank 1 (test)",
                                 Clock::now() + 800ms, 200ms,
                                 [&](const std::string& line) { progress.push_back(line); });
  });
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  REQUIRE(outcome->done);
  CHECK(Clock::now() - started >= 800ms);  // retried until the deadline, not failed at once
  CHECK_THROWS_AS(outcome->get(), RendezvousError);
  const std::string message = outcome->message();
  INFO(message);
  CHECK(message.starts_with("rendezvous failed on node rank 1 (test): the store's host name '" +
                            kUnresolvableName + "' did not resolve within "));
  CHECK(message.ends_with("; check the name, or give a numeric address"));
  CHECK(message.find('\n') == std::string::npos);
  REQUIRE_FALSE(progress.empty());
  for (const std::string& line : progress) {
    INFO(line);
    CHECK(line.starts_with("waiting for the name " + kUnresolvableName +
                           " to resolve (from node rank 1 (test)): "));
    CHECK(line.find("; giving up in ") != std::string::npos);
  }
}

TEST_CASE("ConnectWithProgress: the first progress line names the setting that waits less",
          "[rendezvous][store_steps]") {
  asio::io_context io;
  AsyncStoreClient client(io.get_executor());
  asio::ip::tcp::acceptor probe(io,
                                asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const int port = probe.local_endpoint().port();
  probe.close();
  std::vector<std::string> progress;
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await ConnectWithProgress(
        client, "127.0.0.1", port, "node rank 1 (test)", Clock::now() + 700ms, 150ms,
        [&](const std::string& line) { progress.push_back(line); }, "--rdzv-conf timeout=SECONDS");
  });
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  REQUIRE(outcome->done);
  // Issue 27: a wrong --master-addr waited 900 s before anything said how to wait less.
  REQUIRE(progress.size() >= 2);
  INFO(progress[0]);
  CHECK(progress[0].starts_with("still trying to reach the rendezvous store from node rank 1"));
  CHECK(progress[0].find("; giving up in ") != std::string::npos);
  CHECK(progress[0].ends_with(" (--rdzv-conf timeout=SECONDS waits less)"));
  CHECK(progress[1].find("--rdzv-conf") == std::string::npos);
}

TEST_CASE("ConnectWithProgress: a name that resolves but refuses is not a name problem",
          "[rendezvous][store_steps]") {
  asio::io_context io;
  AsyncStoreClient client(io.get_executor());
  // A port nothing listens on: bind one and close it.
  asio::ip::tcp::acceptor probe(io,
                                asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const int port = probe.local_endpoint().port();
  probe.close();
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await ConnectWithProgress(client, "localhost", port, "node rank 1 (test)",
                                 Clock::now() + 300ms, 100ms, {});
  });
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  REQUIRE(outcome->done);
  CHECK_THROWS_AS(outcome->get(), RendezvousError);
  CHECK(outcome->message().find("did not resolve") == std::string::npos);
  CHECK(outcome->message().find("gave up after") != std::string::npos);
}

// A loopback peer that is not a store: reads the handshake, writes `answer` (maybe nothing) and
// hangs up, on every connection. Returns the message ConnectWithProgress ended with.
struct NotAStoreRun {
  std::string message;
  std::vector<std::string> progress;
  int connections = 0;
  int port = 0;
  Clock::duration elapsed{};
};

NotAStoreRun ConnectToNotAStore(const std::string& answer) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io,
                                   asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  NotAStoreRun run;
  std::function<void()> serve = [&] {
    acceptor.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket socket) {
      if (ec) return;
      ++run.connections;
      auto peer = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
      auto buffer = std::make_shared<std::array<char, 64>>();
      peer->async_read_some(asio::buffer(*buffer), [peer, buffer, &answer](auto, std::size_t) {
        boost::system::error_code ignored;
        asio::write(*peer, asio::buffer(answer), ignored);
        peer->close(ignored);
      });
      serve();
    });
  };
  serve();
  AsyncStoreClient client(io.get_executor(), AsyncStoreClient::Options::Agent(5s, "secret"));
  const int port = acceptor.local_endpoint().port();
  run.port = port;
  const auto started = Clock::now();
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await ConnectWithProgress(client, "127.0.0.1", port, "node rank 1 (test)",
                                 Clock::now() + 30s, 1000ms,
                                 [&](const std::string& line) { run.progress.push_back(line); });
  });
  RunUntil(
      io, [&] { return outcome->done; }, 20000ms);
  REQUIRE(outcome->done);
  run.elapsed = Clock::now() - started;
  CHECK_THROWS_AS(outcome->get(), RendezvousError);
  run.message = outcome->message();
  return run;
}

TEST_CASE("ConnectWithProgress: a text answer names the service at once",
          "[rendezvous][store_steps]") {
  NotAStoreRun run = ConnectToNotAStore("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  INFO(run.message);
  CHECK(run.message == "rendezvous failed on node rank 1 (test): the service at 127.0.0.1:" +
                           std::to_string(run.port) +
                           " is not a store: it answered \"HTTP/1.1 400 Bad Request\" (is that "
                           "port another service's? check --master-port or the --rdzv-endpoint "
                           "port)");
  CHECK(run.connections == 1);
  CHECK(run.progress.empty());
  CHECK(run.elapsed < 2s);
}

TEST_CASE("ConnectWithProgress: binary bytes keep the client's own reason and show the bytes",
          "[rendezvous][store_steps]") {
  // A length-prefixed value of 2 bytes (little endian) where the agent handshake wants a nonce.
  NotAStoreRun run =
      ConnectToNotAStore(std::string("\x02\x00\x00\x00\x00\x00\x00\x00\x01\x02", 10));
  INFO(run.message);
  CHECK(run.message.find("answered the agent handshake wrongly") != std::string::npos);
  CHECK(run.message.ends_with("(it answered 10 bytes: 02 00 00 00 00 00 00 00 01 02)"));
  CHECK(run.connections == 1);
}

TEST_CASE("ConnectWithProgress: a peer that hangs up backs off, then is given up on",
          "[rendezvous][store_steps]") {
  NotAStoreRun run = ConnectToNotAStore("");
  INFO(run.message);
  CHECK(run.message.find("accepted the connection and closed it without answering the store "
                         "handshake, 10 times in a row") != std::string::npos);
  CHECK(run.connections == 10);
  // The pauses (50 ms doubling to 1 s) add up to about 4.5 s; progress at most once a second.
  CHECK(run.elapsed > 3s);
  CHECK(run.progress.size() <= 6);
}

}  // namespace
}  // namespace cpplaunch
