// The agent's store: where it listens, the busy-port fallback, and the idle event the store's
// host waits on before exiting.

#include "launcher/multihost/start_store.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>
#include <chrono>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

TEST_CASE("StartStore: a busy port the user did not choose falls back to a free one",
          "[agent][store_host]") {
  boost::asio::io_context io;
  std::vector<std::string> said;
  auto say = [&](const std::string& line) { said.push_back(line); };
  auto holder = StartStore(io, "127.0.0.1", 0, "--master-port", say);
  const int busy = holder->port();
  auto moved = StartStore(io, "127.0.0.1", busy, /*chosen_by=*/"", say);
  CHECK(moved->port() != busy);
  REQUIRE(said.size() == 1);
  CHECK(said[0] == "port " + std::to_string(busy) + " is busy; the store listens on port " +
                       std::to_string(moved->port()) + " instead (use --master-port to choose)");
  CHECK_THROWS_AS(StartStore(io, "127.0.0.1", busy, "--master-port", say), StoreBindError);
}

TEST_CASE("StartStore: a busy port from --rdzv-endpoint is an error naming --rdzv-endpoint",
          "[agent][store_host]") {
  boost::asio::io_context io;
  auto say = [](const std::string&) {};
  auto holder = StartStore(io, "127.0.0.1", 0, "--master-port", say);
  const int busy = holder->port();
  // Issue 27: a second job on the same endpoint was told to choose another --master-port.
  try {
    StartStore(io, "127.0.0.1", busy, "--rdzv-endpoint", say);
    FAIL("bound a busy port");
  } catch (const StoreBindError& e) {
    const std::string message = e.what();
    CHECK(message.find("give --rdzv-endpoint another HOST:PORT") != std::string::npos);
    CHECK(message.find("--master-port") == std::string::npos);
  }
}

TEST_CASE("StoreServer::WhenIdle fires when the last connection closes, not before",
          "[agent][store_host]") {
  boost::asio::io_context io;
  auto store = StartStore(io, "127.0.0.1", 0, "--master-port", [](const std::string&) {});
  boost::asio::ip::tcp::socket client(io);
  client.connect({boost::asio::ip::make_address("127.0.0.1"), store->port()});
  io.run_for(100ms);  // the server accepts
  REQUIRE(store->connection_count() == 1);
  bool idle = false;
  store->WhenIdle([&] { idle = true; });
  io.run_for(100ms);
  CHECK(!idle);
  client.close();
  for (int i = 0; i < 50 && !idle; ++i) io.run_for(20ms);
  CHECK(idle);

  bool at_once = false;  // nothing open: posted at once
  store->WhenIdle([&] { at_once = true; });
  CHECK(!at_once);  // never inline
  io.run_for(20ms);
  CHECK(at_once);
}

TEST_CASE("StoreConnectionCap keeps a reserve for the agent's own files below the fd limit",
          "[agent][store_host]") {
  // The defaults of a shell: 1,024; two workers keep 256 + 2 x 8 for the agent.
  CHECK(StoreConnectionCap(1024, 2) == 1024 - 256 - 16);
  CHECK(StoreConnectionCap(1024, 8) == 1024 - 256 - 64);
  // A raised limit: the store's own cap.
  CHECK(StoreConnectionCap(1048576, 8) == 16384);
  CHECK(StoreConnectionCap(16384 + 256 + 8, 1) == 16384);
  CHECK(StoreConnectionCap(16384 + 256 + 7, 1) == 16383);
  // Below the reserve: the store still takes one connection.
  CHECK(StoreConnectionCap(100, 8) == 1);
  CHECK(StoreConnectionCap(0, 0) == 1);
}

}  // namespace
}  // namespace cpplaunch
