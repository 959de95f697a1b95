#include "rendezvous/store/client/store_client.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "tests/rendezvous/store/loopback_server.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using test::LoopbackServer;
using test::RawConnection;

StoreClientOptions For(const LoopbackServer& server, Dialect dialect = Dialect::kModern) {
  StoreClientOptions options;
  options.port = server.port();
  options.dialect = dialect;
  options.timeout = 5s;
  options.connect_timeout = 5s;
  return options;
}

TEST_CASE("StoreClient implements the Store operations in both dialects", "[rendezvous][client]") {
  LoopbackServer server;
  Dialect dialect = GENERATE(Dialect::kModern, Dialect::kLegacy);
  StoreClient client(For(server, dialect));
  client.Set("a", std::string("bin\0ary", 7));
  CHECK(client.Get("a") == std::string("bin\0ary", 7));
  CHECK(client.Add("n", 5) == 5);
  CHECK(client.Add("n", -7) == -2);
  CHECK(client.Get("n") == "-2");
  CHECK(client.CompareSet("c", "", "first") == "first");
  CHECK(client.CompareSet("c", "wrong", "second") == "first");
  CHECK(client.CompareSet("c", "first", "second") == "second");
  CHECK(client.CompareSet("missing", "x", "y") == "x");
  CHECK(client.Check({"a", "n"}));
  CHECK_FALSE(client.Check({"a", "nope"}));
  CHECK(client.NumKeys() == 3);
  CHECK(client.DeleteKey("a"));
  CHECK_FALSE(client.DeleteKey("a"));
  client.Append("l", "x");
  client.Append("l", "y");
  client.MultiSet({{"m1", "1"}, {"m2", "2"}});
  CHECK(client.MultiGet({"l", "m1", "m2"}) == std::vector<Bytes>{"xy", "1", "2"});
  if (dialect == Dialect::kModern) {
    client.Ping();
  } else {
    CHECK_THROWS_AS(client.Ping(), StoreError);
  }
}

TEST_CASE("large values round-trip and the connection stays usable", "[rendezvous][client]") {
  LoopbackServer server;
  StoreClient client(For(server, Dialect::kLegacy));
  for (size_t size : {size_t{1} << 20, size_t{3} << 20, size_t{100}, size_t{8} << 20}) {
    std::string value(size, 'v');
    value[size / 2] = '\0';
    client.Set("large", value);
    CHECK(client.Get("large") == value);
    CHECK(client.NumKeys() == 1);
    CHECK(client.Add("n", 1) > 0);
    client.DeleteKey("n");
  }
}

TEST_CASE("StoreClient keys are shared with PyTorch's '/' convention and raw keys",
          "[rendezvous][client]") {
  LoopbackServer server;
  StoreClient prefixed(For(server));
  auto raw_options = For(server);
  raw_options.key_prefix = "";
  StoreClient raw(raw_options);
  prefixed.Set("k", "v");
  CHECK(raw.Get("/k") == "v");
  raw.Add("init/", 1);
  CHECK_FALSE(prefixed.Check({"init/"}));
}

TEST_CASE("Wait returns when another client sets the keys", "[rendezvous][client]") {
  LoopbackServer server;
  StoreClient waiter(For(server));
  std::thread setter([&] {
    StoreClient other(For(server, Dialect::kLegacy));
    std::this_thread::sleep_for(50ms);
    other.Set("x", "1");
    other.Set("y", "2");
  });
  auto start = std::chrono::steady_clock::now();
  waiter.Wait({"x", "y"}, 5s);
  CHECK(std::chrono::steady_clock::now() - start >= 40ms);
  setter.join();
  CHECK(waiter.Get("y") == "2");
}

TEST_CASE("Wait timeout: modern cancels and stays in sync, legacy reconnects",
          "[rendezvous][client]") {
  LoopbackServer server;
  Dialect dialect = GENERATE(Dialect::kModern, Dialect::kLegacy);
  StoreClient client(For(server, dialect));
  auto start = std::chrono::steady_clock::now();
  try {
    client.Wait({"never", "also"}, 100ms);
    FAIL("no timeout");
  } catch (const StoreTimeout& error) {
    std::string text = error.what();
    CHECK(text.find("WAIT ['never', 'also']") != std::string::npos);
    CHECK(text.find("127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
    CHECK(text.find("100ms") != std::string::npos);
    CHECK(text.find('\n') == std::string::npos);
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= 100ms);
  CHECK(elapsed < 2s);
  // A late set must not leave a stray STOP_WAITING in front of the next reply.
  StoreClient other(For(server));
  other.Set("never", "1");
  other.Set("also", "1");
  std::this_thread::sleep_for(20ms);
  CHECK(client.Add("counter", 42) == 42);
  CHECK(client.Get("never") == "1");
}

TEST_CASE("Get waits for the key up to the store timeout", "[rendezvous][client]") {
  LoopbackServer server;
  auto options = For(server);
  options.timeout = 150ms;
  StoreClient client(options);
  CHECK_THROWS_AS(client.Get("absent"), StoreTimeout);
  client.Set("absent", "now");
  CHECK(client.Get("absent") == "now");
}

TEST_CASE("StoreClient retries connecting until the server listens", "[rendezvous][client]") {
  uint16_t port;
  {
    LoopbackServer probe;
    port = probe.port();
  }
  StoreClientOptions options;
  options.port = port;
  options.connect_timeout = 5s;
  std::unique_ptr<LoopbackServer> server;
  std::thread late([&] {
    std::this_thread::sleep_for(200ms);
    auto server_options = LoopbackServer::Defaults();
    server_options.port = port;
    server = std::make_unique<LoopbackServer>(server_options);
  });
  StoreClient client(options);
  client.Set("k", "v");
  late.join();
  CHECK(client.Get("k") == "v");
}

TEST_CASE("StoreClient gives up connecting at the deadline with a one-line error",
          "[rendezvous][client]") {
  uint16_t port;
  {
    LoopbackServer probe;
    port = probe.port();
  }
  StoreClientOptions options;
  options.port = port;
  options.connect_timeout = 200ms;
  CHECK_THROWS_WITH(StoreClient(options),
                    Catch::Contains("cannot connect to the store at 127.0.0.1:" +
                                    std::to_string(port) + " within 200ms: Connection refused"));
}

TEST_CASE("StoreClient reports a closed connection naming operation and key, then reconnects",
          "[rendezvous][client]") {
  LoopbackServer server;
  StoreClient client(For(server));
  client.Set("text", "hello");
  CHECK_THROWS_WITH(client.Add("text", 1), Catch::Contains("store ADD 'text' on 127.0.0.1:") &&
                                               Catch::Contains("the server closed the connection"));
  CHECK(client.Add("number", 1) == 1);
}

TEST_CASE("StoreClient caps lengths the server sends", "[rendezvous][client]") {
  LoopbackServer server;
  auto options = For(server);
  options.limits.max_value_bytes = 10;
  StoreClient client(options);
  client.Set("big", std::string(11, 'x'));
  CHECK_THROWS_WITH(client.Get("big"), Catch::Contains("value length of 11"));
}

}  // namespace
}  // namespace cpplaunch
