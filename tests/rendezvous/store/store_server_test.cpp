#include "rendezvous/store/store_server.h"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "rendezvous/store/client/store_client.h"
#include "tests/rendezvous/store/loopback_server.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using test::FromHex;
using test::LoopbackServer;
using test::RawConnection;
using test::ToHex;

std::string Encode(Dialect dialect, Command command, std::vector<std::string> keys,
                   std::vector<Bytes> values = {}, int64_t number = 0) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  request.number = number;
  std::string bytes;
  EncodeRequest(dialect, request, &bytes);
  return bytes;
}

std::string LegacySet(const std::string& key, const std::string& value) {
  return Encode(Dialect::kLegacy, Command::kSet, {key}, {value});
}

const std::string kGetNumKeys = FromHex("06");  // legacy

TEST_CASE("StoreServer answers the legacy vectors over TCP, including split writes",
          "[rendezvous][server]") {
  LoopbackServer server;
  RawConnection c(server.port());
  REQUIRE(c.connected());
  std::string set =
      FromHex("00 04 00 00 00 00 00 00 00 2f 6b 65 79 03 00 00 00 00 00 00 00 76 61 6c");
  std::string wait = FromHex("05 01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79");
  for (char byte : set + wait) {  // one byte per segment
    c.Send(std::string(1, byte));
    std::this_thread::sleep_for(1ms);
  }
  CHECK(ToHex(c.Receive(1)) == "00");
  c.Send(FromHex("02 04 00 00 00 00 00 00 00 2f 6b 65 79") + kGetNumKeys);  // two in one write
  CHECK(ToHex(c.Receive(19)) == "03 00 00 00 00 00 00 00 76 61 6c 01 00 00 00 00 00 00 00");
}

TEST_CASE("StoreServer serves both dialects at once on one port", "[rendezvous][server]") {
  LoopbackServer server;
  RawConnection legacy(server.port());
  RawConnection modern(server.port());
  modern.Send(FromHex("00 ce f7 85 3c 0d 39 30 00 00"));
  CHECK(ToHex(modern.Receive(4)) == "39 30 00 00");
  legacy.Send(LegacySet("/shared", "v") + kGetNumKeys);
  REQUIRE(legacy.Receive(8).size() == 8);  // the SET is applied before the other connection asks
  modern.Send(Encode(Dialect::kModern, Command::kGet, {"/shared"}));
  CHECK(modern.Receive(9) == FromHex("01 00 00 00 00 00 00 00") + "v");
}

TEST_CASE("WAIT is answered when another client sets the key", "[rendezvous][server]") {
  LoopbackServer server;
  RawConnection waiter(server.port());
  RawConnection setter(server.port());
  waiter.Send(Encode(Dialect::kLegacy, Command::kWait, {"/a", "/b"}));
  CHECK(waiter.Receive(1, 100ms).empty());
  setter.Send(LegacySet("/a", "1"));
  CHECK(waiter.Receive(1, 100ms).empty());
  setter.Send(LegacySet("/b", "1"));
  CHECK(ToHex(waiter.Receive(1)) == "00");
}

TEST_CASE("WATCH_KEY on an idle second connection receives notifications", "[rendezvous][server]") {
  LoopbackServer server;
  RawConnection main(server.port());
  RawConnection callback(server.port());
  callback.Send(FromHex("07 03 00 00 00 00 00 00 00 2f 77 6b"));
  CHECK(ToHex(callback.Receive(1)) == "03");
  main.Send(LegacySet("/wk", "v1"));
  CHECK(
      ToHex(callback.Receive(30)) ==
      "01 03 00 00 00 00 00 00 00 2f 77 6b 00 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 76 31");
  main.Send(Encode(Dialect::kLegacy, Command::kDeleteKey, {"/wk"}));
  CHECK(main.Receive(8).size() == 8);
  CHECK(
      ToHex(callback.Receive(30)) ==
      "02 03 00 00 00 00 00 00 00 2f 77 6b 02 00 00 00 00 00 00 00 76 31 00 00 00 00 00 00 00 00");
}

TEST_CASE("a protocol error closes only that connection", "[rendezvous][server]") {
  LoopbackServer server;
  RawConnection good(server.port());
  good.Send(LegacySet("/k", "v"));
  SECTION("unknown command") {
    RawConnection bad(server.port());
    bad.Send(FromHex("0d"));
    CHECK(bad.ClosedByPeer());
  }
  SECTION("GET of a missing key, after the earlier replies went out") {
    RawConnection bad(server.port());
    bad.Send(kGetNumKeys + Encode(Dialect::kLegacy, Command::kGet, {"/missing"}));
    CHECK(bad.Receive(8).size() == 8);
    CHECK(bad.ClosedByPeer());
  }
  SECTION("a 1 GiB declared value is refused from its length") {
    RawConnection bad(server.port());
    bad.Send(FromHex("00 02 00 00 00 00 00 00 00 2f 61 00 00 00 40 00 00 00 00"));
    CHECK(bad.ClosedByPeer());
  }
  good.Send(kGetNumKeys);
  CHECK(ToHex(good.Receive(8)) == "01 00 00 00 00 00 00 00");
}

TEST_CASE("a half-sent request and idle connections never stall other clients",
          "[rendezvous][server]") {
  LoopbackServer server;
  RawConnection stalled(server.port());
  stalled.Send(FromHex("00 10 00 00 00 00 00 00 00 2f 68 61"));  // SET, half a key, then silence
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(std::make_unique<RawConnection>(server.port()));
  auto start = std::chrono::steady_clock::now();
  StoreClientOptions options;
  options.port = server.port();
  options.timeout = 2s;
  StoreClient client(options);
  for (int i = 0; i < 100; ++i) client.Set("k" + std::to_string(i), "v");
  CHECK(client.Get("k99") == "v");
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  CHECK(server.OnLoop([](StoreServer& s) { return s.connection_count(); }) == 202);
  CHECK_FALSE(stalled.ClosedByPeer(50ms));  // still open: it may finish its request later
  stalled.Send(FromHex("6c 66 5f 6b 65 79 5f 31 32 33 34 35 36 01 00 00 00 00 00 00 00 78"));
  CHECK(client.Get("half_key_123456") == "x");  // the finished SET of "/half_key_123456"
}

TEST_CASE("the connection limit closes connections beyond it", "[rendezvous][server]") {
  auto options = LoopbackServer::Defaults();
  options.max_connections = 3;
  LoopbackServer server(options);
  std::vector<std::unique_ptr<RawConnection>> conns;
  for (int i = 0; i < 3; ++i) conns.push_back(std::make_unique<RawConnection>(server.port()));
  for (auto& conn : conns) conn->Send(kGetNumKeys);
  for (auto& conn : conns) CHECK(conn->Receive(8).size() == 8);
  RawConnection extra(server.port());
  CHECK(extra.ClosedByPeer());
  conns.pop_back();
  std::this_thread::sleep_for(50ms);
  RawConnection again(server.port());
  again.Send(kGetNumKeys);
  CHECK(again.Receive(8).size() == 8);
}

TEST_CASE("a client that pipelines without reading is paused, not fed without bound",
          "[rendezvous][server]") {
  LoopbackServer server;
  RawConnection writer(server.port());
  writer.Send(LegacySet("/big", std::string(1 << 20, 'x')) + kGetNumKeys);
  REQUIRE(writer.Receive(8).size() == 8);
  RawConnection reader(server.port());
  std::string get = Encode(Dialect::kLegacy, Command::kGet, {"/big"});
  std::string many;
  for (int i = 0; i < 200; ++i) many += get;
  reader.Send(many);  // 200 MiB of replies requested; nothing read yet
  std::this_thread::sleep_for(200ms);
  writer.Send(kGetNumKeys);
  CHECK(writer.Receive(8).size() == 8);  // the server is responsive meanwhile
  const size_t expected = 200 * ((1u << 20) + 8);
  size_t total = 0;
  while (total < expected) {
    auto got = reader.Receive(std::min<size_t>(1 << 20, expected - total), 5s);
    if (got.empty()) break;
    total += got.size();
  }
  CHECK(total == expected);
}

TEST_CASE("a watcher that never reads is closed past the output cap", "[rendezvous][server]") {
  auto options = LoopbackServer::Defaults();
  options.max_output_bytes = 4 << 20;
  LoopbackServer server(options);
  RawConnection watcher(server.port());
  ::setsockopt(watcher.fd(), SOL_SOCKET, SO_RCVBUF, std::array<int, 1>{4096}.data(), sizeof(int));
  watcher.Send(Encode(Dialect::kLegacy, Command::kWatchKey, {"/w"}));
  REQUIRE(ToHex(watcher.Receive(1)) == "03");
  RawConnection setter(server.port());
  for (int i = 0; i < 40; ++i) {
    setter.Send(LegacySet("/w", std::string(512 * 1024, static_cast<char>('a' + i % 26))));
  }
  setter.Send(kGetNumKeys);
  CHECK(setter.Receive(8).size() == 8);
  CHECK(server.OnLoop([](StoreServer& s) { return s.connection_count(); }) == 1);
}

TEST_CASE("StoreServer binds dual stack on :: and exactly the given address otherwise",
          "[rendezvous][server]") {
  auto options = LoopbackServer::Defaults();
  SECTION("::") {
    options.bind_host = "::";
    LoopbackServer server(options);
    RawConnection v4(server.port());
    RawConnection v6(server.port(), true);
    CHECK(v4.connected());
    CHECK(v6.connected());
  }
  SECTION("127.0.0.1 only") {
    LoopbackServer server(options);
    RawConnection v6(server.port(), true);
    CHECK_FALSE(v6.connected());
  }
  SECTION("::1 only") {
    options.bind_host = "::1";
    LoopbackServer server(options);
    RawConnection v6(server.port(), true);
    RawConnection v4(server.port());
    CHECK(v6.connected());
    CHECK_FALSE(v4.connected());
  }
}

TEST_CASE("StoreBindError names the address and the reason in one line", "[rendezvous][server]") {
  boost::asio::io_context io;
  StoreServerOptions options;
  options.bind_host = "127.0.0.1";
  StoreServer first(io, options);
  options.port = first.port();
  try {
    StoreServer second(io, options);
    FAIL("bound twice");
  } catch (const StoreBindError& error) {
    std::string expected = "cannot bind the store to 127.0.0.1:" + std::to_string(first.port()) +
                           ": Address already in use; choose another --master-port or "
                           "--master-port=0";
    CHECK(std::string(error.what()) == expected);
  }
  options.bind_host = "192.0.2.1";  // TEST-NET-1: not an address of this host
  options.port = 0;
  CHECK_THROWS_WITH(StoreServer(io, options),
                    Catch::Contains("cannot bind the store to 192.0.2.1:0: Cannot assign"));
}

TEST_CASE("many concurrent clients: init pattern with waits woken by each other",
          "[rendezvous][server]") {
  LoopbackServer server;
  constexpr int kClients = 64;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int rank = 0; rank < kClients; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        StoreClientOptions options;
        options.port = server.port();
        options.timeout = 20s;
        options.dialect = rank % 2 ? Dialect::kLegacy : Dialect::kModern;
        StoreClient client(options);
        client.Add("init/", 1);
        client.Set("rank" + std::to_string(rank), std::to_string(rank));
        std::vector<std::string> all;
        for (int r = 0; r < kClients; ++r) all.push_back("rank" + std::to_string(r));
        client.Wait(all);
        for (int r = 0; r < kClients; ++r) {
          if (client.Get(all[r]) != std::to_string(r)) ++failures;
        }
        if (client.Add("init/", 0) != kClients) ++failures;
      } catch (const std::exception& error) {
        UNSCOPED_INFO(error.what());
        ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
}

}  // namespace
}  // namespace cpplaunch
