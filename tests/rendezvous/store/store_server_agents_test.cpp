// The agents' side of the store (docs/security.md): the agent handshake, the two namespaces, and
// CLAIM / WILL / CANCEL_WILLS / CLEAR_WORKER_KEYS, through AsyncStoreClient and raw sockets
// against a real StoreServer on loopback.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "rendezvous/store/client/async_store_client.h"
#include "tests/rendezvous/rendezvous_test_support.h"
#include "tests/rendezvous/store/agent_wire.h"
#include "tests/rendezvous/store/loopback_server.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = AsyncStoreClient::Clock;
using test::EncodeIn;
using test::FromHex;
using test::LoopbackServer;
using test::RawConnection;
using test::ToHex;
using testing::RunUntil;
using testing::SpawnBody;

// Note: no co_await inside CHECK() (see async_store_client_test.cpp).

StoreServerOptions WithSecret(std::string secret) {
  StoreServerOptions options = LoopbackServer::Defaults();
  options.secret = std::move(secret);
  return options;
}

AsyncStoreClient::Options AgentOptions(std::string secret) {
  return AsyncStoreClient::Options::Agent(5000ms, std::move(secret));
}

// Runs the coroutine lambda `body` on `io` to completion (at most `limit`); returns its value or
// rethrows its exception.
template <class Body>
auto Run(asio::io_context& io, Body body, std::chrono::milliseconds limit = 10000ms) {
  auto outcome = SpawnBody(io, std::move(body));
  RunUntil(
      io, [&] { return outcome->done; }, limit);
  return outcome->get();
}

asio::awaitable<void> ConnectTo(AsyncStoreClient& client, uint16_t port) {
  co_await client.Connect("127.0.0.1", port, Clock::now() + 3s);
}

std::vector<std::string> Sorted(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}

const std::string kLegacyGetNumKeys = FromHex("06");

TEST_CASE("agents and PyTorch clients work on separate namespaces", "[rendezvous][agent_store]") {
  LoopbackServer server(WithSecret("s3cret"));
  asio::io_context io;
  AsyncStoreClient agent(io.get_executor(), AgentOptions("s3cret"));
  AsyncStoreClient worker(io.get_executor());
  auto seen = Run(io, [&]() -> asio::awaitable<std::vector<std::vector<std::string>>> {
    co_await ConnectTo(agent, server.port());
    co_await ConnectTo(worker, server.port());
    co_await agent.Set("cpplaunch/job/r0/end", "agent notice");
    co_await agent.Set("shared", "agent");
    co_await worker.Set("/worker/rank_0", "w");
    co_await worker.Set("shared", "worker");
    std::vector<std::vector<std::string>> lists;
    lists.push_back(co_await agent.ListKeys());
    lists.push_back(co_await worker.ListKeys());
    std::vector<std::string> agent_key(1, "cpplaunch/job/r0/end");
    std::vector<std::string> worker_key(1, "/worker/rank_0");
    const bool worker_sees_agent_key = co_await worker.Check(std::move(agent_key));
    const bool agent_sees_worker_key = co_await agent.Check(std::move(worker_key));
    std::vector<std::string> visible(2);
    if (worker_sees_agent_key) visible[0] = "worker sees";
    if (agent_sees_worker_key) visible[1] = "agent sees";
    lists.push_back(visible);
    std::vector<std::string> shared(1, co_await agent.Get("shared"));
    shared.push_back(co_await worker.Get("shared"));
    lists.push_back(shared);
    co_return lists;
  });
  CHECK(Sorted(seen[0]) == std::vector<std::string>{"cpplaunch/job/r0/end", "shared"});
  CHECK(Sorted(seen[1]) == std::vector<std::string>{"/worker/rank_0", "shared"});
  CHECK(seen[2] == std::vector<std::string>{"", ""});
  CHECK(seen[3] == std::vector<std::string>{"agent", "worker"});
  CHECK(server.OnLoop([](StoreServer& s) { return s.agent_key_count(); }) == 2);
  CHECK(server.OnLoop([](StoreServer& s) { return s.key_count(); }) == 2);
}

TEST_CASE(
    "a raw PyTorch-dialect client can neither list, read, write, wait on nor delete agents' keys",
    "[rendezvous][agent_store]") {
  LoopbackServer server(WithSecret("s3cret"));
  asio::io_context io;
  AsyncStoreClient agent(io.get_executor(), AgentOptions("s3cret"));
  Run(io, [&]() -> asio::awaitable<void> {
    co_await ConnectTo(agent, server.port());
    co_await agent.Set("cpplaunch/job/r0/end", "real");
  });
  const std::string key = "cpplaunch/job/r0/end";

  RawConnection modern(server.port());
  modern.Send(FromHex("00 ce f7 85 3c") + FromHex("11"));  // VALIDATE, LIST_KEYS
  CHECK(ToHex(modern.Receive(8)) == "00 00 00 00 00 00 00 00");

  RawConnection legacy(server.port());
  legacy.Send(EncodeIn(Dialect::kLegacy, Command::kSet, {key}, {"forged"}));
  legacy.Send(EncodeIn(Dialect::kLegacy, Command::kDeleteKey, {key}));
  CHECK(ToHex(legacy.Receive(8)) == "01 00 00 00 00 00 00 00");  // its own forged copy
  legacy.Send(EncodeIn(Dialect::kLegacy, Command::kDeleteKey, {key}));
  CHECK(ToHex(legacy.Receive(8)) == "00 00 00 00 00 00 00 00");

  RawConnection waiter(server.port());
  waiter.Send(EncodeIn(Dialect::kLegacy, Command::kWait, {key}));
  Run(io, [&]() -> asio::awaitable<void> { co_await agent.Set(key, "again"); });
  CHECK(waiter.Receive(1, 200ms).empty());  // the agents' key exists, but not for this client

  RawConnection reader(server.port());
  reader.Send(EncodeIn(Dialect::kLegacy, Command::kGet, {key}));
  CHECK(reader.ClosedByPeer());  // a missing key, as far as this client can tell

  auto value = Run(io, [&]() -> asio::awaitable<Bytes> { co_return co_await agent.Get(key); });
  CHECK(value == "again");
  CHECK(server.OnLoop([](StoreServer& s) { return s.agent_key_count(); }) == 1);
}

TEST_CASE("the agent commands are unknown commands on PyTorch connections",
          "[rendezvous][agent_store]") {
  LoopbackServer server;
  for (uint8_t byte = 0xC8; byte <= 0xCD; ++byte) {
    RawConnection legacy(server.port());
    legacy.Send(std::string(1, static_cast<char>(byte)));
    CHECK(legacy.ClosedByPeer());
    RawConnection modern(server.port());
    modern.Send(FromHex("00 ce f7 85 3c") + std::string(1, static_cast<char>(byte)));
    CHECK(modern.ClosedByPeer());
  }
  // AGENT_HELLO is recognised as a connection's first byte only.
  RawConnection late(server.port());
  late.Send(kLegacyGetNumKeys);
  CHECK(late.Receive(8).size() == 8);
  late.Send(test::AgentHelloBytes());
  CHECK(late.ClosedByPeer());
  // A hello with the wrong magic, and a command before the proof, are refused.
  RawConnection bad_magic(server.port());
  bad_magic.Send(FromHex("c7 00 00 00 00 20 00 00 00 00 00 00 00") + test::kTestAgentNonce);
  CHECK(bad_magic.ClosedByPeer());
  // The agent's nonce is 32 bytes: the store's proof binds a fresh one, not a chosen short one.
  RawConnection short_nonce(server.port());
  short_nonce.Send(FromHex("c7 43 50 4c 41 01 00 00 00 00 00 00 00 6e"));
  CHECK(short_nonce.ClosedByPeer());
  RawConnection skipping(server.port());
  CHECK(test::RawAgentHello(skipping).size() == kAgentNonceBytes);
  skipping.Send(EncodeIn(Dialect::kAgent, Command::kListKeys, {}));
  CHECK(skipping.ClosedByPeer());
}

TEST_CASE("the handshake refuses a wrong or missing secret with one line",
          "[rendezvous][agent_store]") {
  struct Case {
    std::string server_secret;
    std::string agent_secret;
    bool accepted;
  };
  auto c =
      GENERATE(Case{"s3cret", "s3cret", true}, Case{"", "", true}, Case{"s3cret", "wrong", false},
               Case{"s3cret", "", false}, Case{"", "s3cret", false});
  LoopbackServer server(WithSecret(c.server_secret));
  asio::io_context io;
  AsyncStoreClient agent(io.get_executor(), AgentOptions(c.agent_secret));
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await ConnectTo(agent, server.port());
    co_await agent.Set("k", "v");
  });
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  REQUIRE(outcome->done);
  if (c.accepted) {
    CHECK(outcome->message() == "");
  } else {
    // The handshake is mutual (issue 23): the agent finds the store's proof wrong first.
    CHECK(outcome->message() == "the store at 127.0.0.1:" + std::to_string(server.port()) +
                                    " did not prove this job's secret: its secret_file differs "
                                    "from this host's, or another process holds the port (see "
                                    "docs/security.md)");
    CHECK_FALSE(agent.connected());
    CHECK(server.OnLoop([](StoreServer& s) { return s.agent_key_count(); }) == 0);
    // The agent's empty proof tells the store why: its host can name the refusal.
    const auto until = Clock::now() + 2s;
    while (server.OnLoop([](StoreServer& s) { return s.counters().refused_handshakes; }) == 0 &&
           Clock::now() < until) {
      std::this_thread::sleep_for(10ms);
    }
    const StoreCounters counters = server.OnLoop([](StoreServer& s) { return s.counters(); });
    CHECK(counters.refused_handshakes == 1);
    CHECK(counters.last_refused_peer == "127.0.0.1");
  }
}

// An impostor that took the endpoint's port first (issue 23 item 6): it cannot make the store's
// proof without the secret, so the agent trusts none of its answers and sends it nothing but an
// empty proof: not a MAC it could relay to the real store.
TEST_CASE("an agent refuses a store that cannot prove the secret, and sends it no proof",
          "[rendezvous][agent_store]") {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const uint16_t port = ntohs(address.sin_port);
  std::string heard;
  std::thread impostor([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    // Whatever it answers: a nonce and 32 bytes it cannot make right without the secret.
    const std::string answer = FromHex("40 00 00 00 00 00 00 00") + std::string(64, 'x');
    char buffer[4096];
    bool answered = false;
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) break;
      heard.append(buffer, static_cast<size_t>(n));
      if (!answered && heard.size() >= 5 + 8 + kAgentNonceBytes) {
        answered = ::write(fd, answer.data(), answer.size()) > 0;
      }
    }
    ::close(fd);
  });
  asio::io_context io;
  AsyncStoreClient agent(io.get_executor(), AgentOptions("s3cret"));
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> { co_await ConnectTo(agent, port); });
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  impostor.join();
  ::close(listener);
  REQUIRE(outcome->done);
  CHECK_THAT(outcome->message(), Catch::Contains("did not prove this job's secret"));
  CHECK_FALSE(agent.connected());
  // The hello (magic and the agent's nonce), then only the empty AGENT_PROOF.
  REQUIRE(heard.size() == 5 + 8 + kAgentNonceBytes + 9);
  CHECK(ToHex(heard.substr(0, 5)) == "c7 43 50 4c 41");
  CHECK(ToHex(heard.substr(5 + 8 + kAgentNonceBytes)) == "c8 00 00 00 00 00 00 00 00");
}

TEST_CASE("a recorded handshake cannot be replayed: every connection gets a fresh nonce",
          "[rendezvous][agent_store]") {
  LoopbackServer server(WithSecret("s3cret"));
  RawConnection first(server.port());
  std::string nonce = test::RawAgentHello(first);
  REQUIRE(nonce.size() == kAgentNonceBytes);
  std::string proof = AgentProof("s3cret", nonce);
  first.Send(test::AgentProofBytes(proof) + test::EncodeTagged(1, Command::kSet, {"k"}, {"v"}));
  CHECK(ToHex(first.Receive(1)) == "00");

  // An eavesdropper replays the proof it saw on a new connection.
  RawConnection replay(server.port());
  std::string other_nonce = test::RawAgentHello(replay);
  CHECK(other_nonce.size() == kAgentNonceBytes);
  CHECK(other_nonce != nonce);
  replay.Send(test::AgentProofBytes(proof) + EncodeIn(Dialect::kAgent, Command::kDeleteKey, {"k"}));
  CHECK(ToHex(replay.Receive(1)) == "01");
  CHECK(replay.ClosedByPeer());
  CHECK(server.OnLoop([](StoreServer& s) { return s.agent_key_count(); }) == 1);
}

TEST_CASE("Claim: the first claimant owns the key until its connection closes",
          "[rendezvous][agent_store]") {
  LoopbackServer server;
  asio::io_context io;
  AsyncStoreClient a(io.get_executor(), AgentOptions(""));
  AsyncStoreClient b(io.get_executor(), AgentOptions(""));
  AsyncStoreClient c(io.get_executor(), AgentOptions(""));
  auto claims = Run(io, [&]() -> asio::awaitable<std::vector<std::string>> {
    co_await ConnectTo(a, server.port());
    co_await ConnectTo(b, server.port());
    co_await ConnectTo(c, server.port());
    std::vector<std::string> got;
    got.push_back(co_await a.Claim("rank/1", "a"));
    got.push_back(co_await b.Claim("rank/1", "b"));
    got.push_back(co_await a.Claim("rank/2", "a"));
    // A peer releases a lapsed claim; a later claimant's key is not the old owner's to delete.
    const bool deleted = co_await b.DeleteKey("rank/2");
    got.push_back(deleted ? "deleted" : "");
    got.push_back(co_await c.Claim("rank/2", "c"));
    co_return got;
  });
  CHECK(claims == std::vector<std::string>{"a", "a", "a", "deleted", "c"});
  a.Close();
  // The server sees the close within milliseconds; b then claims the free rank.
  auto after = Run(io, [&]() -> asio::awaitable<std::vector<std::string>> {
    std::vector<std::string> got;
    const auto until = Clock::now() + 2s;
    for (;;) {
      std::vector<std::string> rank1(1, "rank/1");
      const bool held = co_await b.Check(std::move(rank1));
      if (!held || Clock::now() > until) break;
    }
    got.push_back(co_await b.Claim("rank/1", "b"));
    got.push_back(co_await b.Get("rank/2"));
    co_return got;
  });
  CHECK(after == std::vector<std::string>{"b", "c"});
}

TEST_CASE("Will fires when its connection closes, after the owned keys went, and wakes waiters",
          "[rendezvous][agent_store]") {
  LoopbackServer server;
  asio::io_context io;
  AsyncStoreClient dying(io.get_executor(), AgentOptions(""));
  AsyncStoreClient clean(io.get_executor(), AgentOptions(""));
  AsyncStoreClient watcher(io.get_executor(), AgentOptions(""));
  AsyncStoreClient reader(io.get_executor(), AgentOptions(""));
  Run(io, [&]() -> asio::awaitable<void> {
    co_await ConnectTo(dying, server.port());
    co_await ConnectTo(clean, server.port());
    co_await ConnectTo(watcher, server.port());
    co_await ConnectTo(reader, server.port());
    co_await dying.Claim("member/dying", "here");
    co_await dying.Will("member/dying", "gone");  // its own claim: deleted first, then the will
    co_await dying.Will("end", "dying left");
    co_await reader.Set("present", "kept");
    co_await dying.Will("present", "overwritten?");
    co_await dying.Will("end", "dying died");  // replaces the first will on "end"
    co_await clean.Will("clean/end", "clean died");
    co_await clean.CancelWills();
  });
  std::vector<std::string> end_key(1, "end");
  auto woke = SpawnBody(
      io, [&]() -> asio::awaitable<bool> { co_return co_await watcher.Wait(end_key, 5000ms); });
  RunUntil(
      io, [&] { return woke->done; }, 100ms);
  REQUIRE_FALSE(woke->done);
  const auto closed_at = Clock::now();
  dying.Close();
  clean.Close();
  RunUntil(
      io, [&] { return woke->done; }, 5000ms);
  const auto latency = Clock::now() - closed_at;
  CHECK(woke->get());
  WARN("waiter woke " << std::chrono::duration_cast<std::chrono::microseconds>(latency).count()
                      << " us after the owner closed");
  CHECK(latency < 500ms);
  auto values = Run(io, [&]() -> asio::awaitable<std::vector<std::string>> {
    std::vector<std::string> got;
    got.push_back(co_await reader.Get("end"));
    got.push_back(co_await reader.Get("member/dying"));
    got.push_back(co_await reader.Get("present"));
    std::vector<std::string> cancelled(1, "clean/end");
    const bool fired = co_await reader.Check(std::move(cancelled));
    got.push_back(fired ? "clean's will fired" : "");
    co_return got;
  });
  CHECK(values == std::vector<std::string>{"dying died", "gone", "kept", ""});
}

TEST_CASE("Arm: two members arm in one request each, and a closed one's will ends the round",
          "[rendezvous][agent_store]") {
  LoopbackServer server;
  asio::io_context io;
  AsyncStoreClient first(io.get_executor(), AgentOptions(""));
  AsyncStoreClient second(io.get_executor(), AgentOptions(""));
  auto arming = [](const std::string& member, int64_t members) {
    return AsyncStoreClient::Arming{"end",   member + " died", "hb/" + member, "armed/" + member,
                                    "count", members,          "all"};
  };
  auto counts = Run(io, [&]() -> asio::awaitable<std::vector<std::string>> {
    co_await ConnectTo(first, server.port());
    co_await ConnectTo(second, server.port());
    co_await first.Will("stale", "cancelled by Arm");
    std::vector<std::string> got;
    got.push_back(std::to_string(co_await first.Arm(arming("a", 2))));
    std::vector<std::string> all(1, "all");
    got.push_back((co_await second.Check(all)) ? "all" : "not all");
    got.push_back(std::to_string(co_await second.Arm(arming("b", 2))));
    got.push_back((co_await second.Check(all)) ? "all" : "not all");
    got.push_back(co_await second.Get("hb/a"));
    got.push_back(co_await second.Get("count"));
    co_return got;
  });
  CHECK(counts == std::vector<std::string>{"1", "not all", "2", "all", "1", "2"});
  first.Close();
  auto after = Run(io, [&]() -> asio::awaitable<std::vector<std::string>> {
    std::vector<std::string> end(1, "end");
    std::vector<std::string> stale(1, "stale");
    std::vector<std::string> got;
    if (co_await second.Wait(end, 5000ms)) got.push_back(co_await second.Get("end"));
    got.push_back((co_await second.Check(stale)) ? "stale set" : "no stale");
    co_return got;
  });
  CHECK(after == std::vector<std::string>{"a died", "no stale"});  // Arm cancelled "stale"
}

TEST_CASE("Will refuses a 65th key and the connection stays usable", "[rendezvous][agent_store]") {
  LoopbackServer server;
  asio::io_context io;
  AsyncStoreClient agent(io.get_executor(), AgentOptions(""));
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<std::string> {
    co_await ConnectTo(agent, server.port());
    for (int i = 0; i < 64; ++i) co_await agent.Will("will/" + std::to_string(i), "x");
    std::string refused;
    try {
      co_await agent.Will("will/64", "x");
    } catch (const StoreError& error) {
      refused = error.what();
    }
    co_await agent.Set("after", "ok");
    co_return refused + " | " + co_await agent.Get("after");
  });
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  CHECK_THAT(outcome->get(), Catch::Contains("more than 64 wills") && Catch::EndsWith(" | ok"));
}

TEST_CASE("the agent methods throw on a PyTorch-style connection", "[rendezvous][agent_store]") {
  LoopbackServer server;
  asio::io_context io;
  AsyncStoreClient plain(io.get_executor());
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await ConnectTo(plain, server.port());
    co_await plain.Claim("k", "v");
  });
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  CHECK_THAT(outcome->message(), Catch::Contains("only an agent connection"));
  CHECK(plain.connected());
}

// A real process that dies holding keys: a forked child does the handshake on raw sockets,
// claims a key and leaves a will, and is SIGKILLed.
TEST_CASE("a SIGKILLed agent's claims go and its wills fire within milliseconds",
          "[rendezvous][agent_store]") {
  LoopbackServer server(WithSecret("k"));
  const uint16_t port = server.port();
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    RawConnection connection(port);
    if (test::RawAgentHandshake(connection, "k") != kAgentAccepted) ::_exit(3);
    connection.Send(test::EncodeTagged(1, Command::kClaim, {"node/0"}, {"child"}) +
                    test::EncodeTagged(2, Command::kWill, {"end"}, {"child died"}));
    if (connection.Receive(4 + 8 + 5 + 4 + 1).size() != 22) ::_exit(4);
    (void)!::write(ready[1], "r", 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  ::close(ready[0]);
  asio::io_context io;
  AsyncStoreClient peer(io.get_executor(), AgentOptions("k"));
  std::vector<std::string> end_key(1, "end");
  auto claimed = Run(io, [&]() -> asio::awaitable<Bytes> {
    co_await ConnectTo(peer, port);
    co_return co_await peer.Claim("node/0", "replacement");
  });
  CHECK(claimed == "child");
  auto woke = SpawnBody(
      io, [&]() -> asio::awaitable<bool> { co_return co_await peer.Wait(end_key, 5000ms); });
  RunUntil(
      io, [&] { return woke->done; }, 50ms);
  const auto killed_at = Clock::now();
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  RunUntil(
      io, [&] { return woke->done; }, 5000ms);
  const auto latency = Clock::now() - killed_at;
  CHECK(woke->get());
  WARN("peer woke " << std::chrono::duration_cast<std::chrono::microseconds>(latency).count()
                    << " us after SIGKILL");
  CHECK(latency < 500ms);
  auto after = Run(io, [&]() -> asio::awaitable<std::vector<std::string>> {
    std::vector<std::string> got;
    got.push_back(co_await peer.Get("end"));
    got.push_back(co_await peer.Claim("node/0", "replacement"));
    co_return got;
  });
  CHECK(after == std::vector<std::string>{"child died", "replacement"});
}

TEST_CASE("ClearWorkerKeys deletes 140,000 worker keys in one request and keeps the agents'",
          "[rendezvous][agent_store]") {
  LoopbackServer server;
  constexpr int kKeys = 140000;
  RawConnection worker(server.port());
  std::string sets;
  for (int i = 0; i < kKeys; ++i) {
    sets += EncodeIn(Dialect::kLegacy, Command::kSet, {"/junk/" + std::to_string(i)}, {"x"});
  }
  worker.Send(sets + kLegacyGetNumKeys);
  CHECK(worker.Receive(8, 20s) == FromHex("e0 22 02 00 00 00 00 00"));  // 140000
  asio::io_context io;
  AsyncStoreClient agent(io.get_executor(), AgentOptions(""));
  Run(io, [&]() -> asio::awaitable<void> {
    co_await ConnectTo(agent, server.port());
    co_await agent.Set("cpplaunch/job/state", "s");
  });
  const auto started = Clock::now();
  auto cleared =
      Run(io, [&]() -> asio::awaitable<int64_t> { co_return co_await agent.ClearWorkerKeys(); });
  const auto took = Clock::now() - started;
  CHECK(cleared == kKeys);
  WARN("ClearWorkerKeys of " << kKeys << " keys took "
                             << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                             << " ms");
  // The cleared entries are freed in slices: another client's requests meanwhile are answered
  // without waiting for all of them.
  auto slowest = Clock::duration::zero();
  for (int i = 0; i < 50; ++i) {
    const auto asked = Clock::now();
    worker.Send(kLegacyGetNumKeys);
    CHECK(ToHex(worker.Receive(8)) == "00 00 00 00 00 00 00 00");
    slowest = std::max(slowest, Clock::now() - asked);
  }
  WARN("slowest GETNUMKEYS while the keys were freed: "
       << std::chrono::duration_cast<std::chrono::microseconds>(slowest).count() << " us");
  CHECK(slowest < 100ms);
  CHECK(server.OnLoop([](StoreServer& s) { return s.agent_key_count(); }) == 1);
}

TEST_CASE("the allow-list closes connections from other networks at accept",
          "[rendezvous][agent_store]") {
  std::string error;
  SECTION("IPv4") {
    StoreServerOptions options = LoopbackServer::Defaults();
    options.allowed_peers = *ParsePeerNetworks("10.0.0.0/8", &error);
    LoopbackServer refusing(options);
    RawConnection refused(refusing.port());
    CHECK(refused.ClosedByPeer(2s));
    options.allowed_peers = *ParsePeerNetworks("10.0.0.0/8;127.0.0.0/8", &error);
    LoopbackServer allowing(options);
    RawConnection allowed(allowing.port());
    allowed.Send(kLegacyGetNumKeys);
    CHECK(allowed.Receive(8).size() == 8);
  }
  SECTION("IPv6 and IPv4-mapped peers on a dual-stack port") {
    StoreServerOptions options = LoopbackServer::Defaults();
    options.bind_host = "::";
    options.allowed_peers = *ParsePeerNetworks("127.0.0.1", &error);
    LoopbackServer server(options);
    RawConnection v4(server.port());  // arrives as ::ffff:127.0.0.1, matched as IPv4
    v4.Send(kLegacyGetNumKeys);
    CHECK(v4.Receive(8).size() == 8);
    RawConnection v6(server.port(), true);
    if (v6.connected()) CHECK(v6.ClosedByPeer(2s));
    options.allowed_peers = *ParsePeerNetworks("::1/128", &error);
    LoopbackServer v6_only(options);
    RawConnection v6_allowed(v6_only.port(), true);
    if (v6_allowed.connected()) {
      v6_allowed.Send(kLegacyGetNumKeys);
      CHECK(v6_allowed.Receive(8).size() == 8);
    }
    RawConnection v4_refused(v6_only.port());
    CHECK(v4_refused.ClosedByPeer(2s));
  }
}

}  // namespace
}  // namespace cpplaunch
