#include "rendezvous/store/client/async_store_client.h"

#include <algorithm>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>

#include "tests/rendezvous/rendezvous_test_support.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
// Note: no co_await inside CHECK(): Catch evaluates the expression a second time in a
// short-circuited branch that GCC 12 coroutines do execute.
using namespace std::chrono_literals;
using testing::RunUntil;
using testing::Spawn;
using testing::SpawnBody;
using Clock = AsyncStoreClient::Clock;

asio::awaitable<void> Sleep(std::chrono::milliseconds duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  co_await timer.async_wait(asio::use_awaitable);
}

// A store server on loopback and the io_context that it and the test's clients run on (both
// outlive the clients a test declares).
struct StoreFixture {
  // Runs the io_context until `finished()` or `limit` passed.
  template <class Pred>
  void Run(Pred finished, std::chrono::milliseconds limit) {
    RunUntil(io, finished, limit);
  }
  void RunFor(std::chrono::milliseconds duration) {
    Run([] { return false; }, duration);
  }
  // Connects `client` to the server; the test stops unless it succeeds.
  void Connect(AsyncStoreClient& client) {
    auto connected = Spawn(io, client.Connect("127.0.0.1", server.port(), Clock::now() + 2s));
    Run([&] { return connected->done; }, 2000ms);
    REQUIRE(connected->message() == "");
  }

  asio::io_context io;
  StoreServer server{io, testing::LoopbackServer()};
};

TEST_CASE_METHOD(StoreFixture, "AsyncStoreClient runs every command against the store server",
                 "[rendezvous][async_client]") {
  AsyncStoreClient client(io.get_executor());
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await client.Connect("127.0.0.1", server.port(), Clock::now() + 2s);
    co_await client.Set("a", "1");
    auto v0 = co_await client.Get("a");
    CHECK(v0 == "1");
    auto v1 = co_await client.Add("n", 5);
    CHECK(v1 == 5);
    auto v2 = co_await client.Add("n", -2);
    CHECK(v2 == 3);
    auto v3 = co_await client.CompareSet("a", "1", "2");
    CHECK(v3 == "2");
    auto v4 = co_await client.CompareSet("a", "1", "3");
    CHECK(v4 == "2");
    std::vector<std::string> present{"a", "n"};
    std::vector<std::string> partly{"a", "missing"};
    auto v5 = co_await client.Check(present);
    CHECK(v5);
    auto v6 = co_await client.Check(partly);
    CHECK_FALSE(v6);
    std::vector<std::string> keys{"x", "y"};
    std::vector<Bytes> values{"vx", std::string("\0\1", 2)};
    co_await client.MultiSet(keys, values);
    auto v7 = co_await client.MultiGet(keys);
    CHECK(v7 == values);
    auto v8 = co_await client.DeleteKey("x");
    CHECK(v8);
    auto v9 = co_await client.DeleteKey("x");
    CHECK_FALSE(v9);
    auto listed = co_await client.ListKeys();
    std::sort(listed.begin(), listed.end());
    CHECK(listed == std::vector<std::string>{"a", "n", "y"});
  });
  Run([&] { return outcome->done; }, 5000ms);
  CHECK(outcome->message() == "");
  CHECK(outcome->done);
}

TEST_CASE_METHOD(StoreFixture,
                 "AsyncStoreClient Wait wakes when another client sets the key, and times out "
                 "cleanly",
                 "[rendezvous][async_client]") {
  AsyncStoreClient waiter(io.get_executor());
  AsyncStoreClient setter(io.get_executor());
  Clock::time_point woke;
  Clock::time_point set_at;
  auto waiting = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await waiter.Connect("127.0.0.1", server.port(), Clock::now() + 2s);
    // Times out: the server's wait is cancelled and the connection stays usable.
    auto started = Clock::now();
    std::vector<std::string> late{"late"};
    auto v10 = co_await waiter.Wait(late, 100ms);
    CHECK_FALSE(v10);
    CHECK(Clock::now() - started >= 100ms);
    auto v11 = co_await waiter.Add("counter", 1);
    CHECK(v11 == 1);
    auto v12 = co_await waiter.Wait(late, 5000ms);
    CHECK(v12);
    woke = Clock::now();
  });
  auto setting = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await setter.Connect("127.0.0.1", server.port(), Clock::now() + 2s);
    co_await Sleep(300ms);
    set_at = Clock::now();
    co_await setter.Set("late", "v");
  });
  Run([&] { return waiting->done && setting->done; }, 5000ms);
  CHECK(waiting->message() == "");
  CHECK(setting->message() == "");
  REQUIRE(waiting->done);
  CHECK(woke - set_at < 50ms);  // a notification, not polling
}

// Parameters, not captures: they live in the coroutine frame.
asio::awaitable<void> SetLater(AsyncStoreClient& setter, std::string key, int delay_ms) {
  co_await Sleep(std::chrono::milliseconds(delay_ms));
  co_await setter.Set(key, "v");
}

TEST_CASE_METHOD(StoreFixture, "AsyncStoreClient Wait racing its own timeout stays in sync",
                 "[rendezvous][async_client]") {
  AsyncStoreClient waiter(io.get_executor());
  AsyncStoreClient setter(io.get_executor());
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await waiter.Connect("127.0.0.1", server.port(), Clock::now() + 2s);
    co_await setter.Connect("127.0.0.1", server.port(), Clock::now() + 2s);
    for (int i = 0; i < 30; ++i) {
      std::string key = "k" + std::to_string(i);
      asio::co_spawn(co_await asio::this_coro::executor, SetLater(setter, key, i % 3),
                     asio::detached);
      std::vector<std::string> keys{key};
      co_await waiter.Wait(keys, std::chrono::milliseconds(1 + i % 2));
      // Whatever the race's outcome, the next reply must be this request's.
      auto v13 = co_await waiter.Add("sync", 1);
      CHECK(v13 == i + 1);
    }
  });
  Run([&] { return outcome->done; }, 10000ms);
  CHECK(outcome->message() == "");
  CHECK(outcome->done);
}

TEST_CASE("AsyncStoreClient Connect gives up at the deadline naming the address and reason",
          "[rendezvous][async_client]") {
  asio::io_context io;
  uint16_t closed_port;
  {
    StoreServer probe(io, testing::LoopbackServer());
    closed_port = probe.port();
  }
  AsyncStoreClient client(io.get_executor());
  auto started = Clock::now();
  auto outcome = Spawn(io, client.Connect("127.0.0.1", closed_port, Clock::now() + 300ms));
  RunUntil(
      io, [&] { return outcome->done; }, 5000ms);
  REQUIRE(outcome->done);
  auto elapsed = Clock::now() - started;
  CHECK(elapsed >= 250ms);
  CHECK(elapsed < 1500ms);
  std::string message = outcome->message();
  CHECK_THAT(message, Catch::Contains("127.0.0.1:" + std::to_string(closed_port)));
  CHECK_THAT(message, Catch::Contains("refused"));
}

TEST_CASE_METHOD(StoreFixture, "AsyncStoreClient reports a store that goes away during a wait",
                 "[rendezvous][async_client]") {
  AsyncStoreClient client(io.get_executor());
  auto outcome = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await client.Connect("127.0.0.1", server.port(), Clock::now() + 2s);
    std::vector<std::string> never{"never"};
    co_await client.Wait(never, std::chrono::hours(24 * 400));
  });
  auto stopping = SpawnBody(io, [&]() -> asio::awaitable<void> {
    co_await Sleep(100ms);
    server.Stop();
  });
  Run([&] { return outcome->done; }, 5000ms);
  REQUIRE(outcome->done);
  CHECK_THAT(outcome->message(), Catch::Contains("WAIT 'never'"));
  CHECK_THAT(outcome->message(), Catch::Contains("closed the connection"));
  CHECK_FALSE(client.connected());
}

TEST_CASE_METHOD(StoreFixture, "AsyncStoreClient refuses a second concurrent operation",
                 "[rendezvous][async_client]") {
  AsyncStoreClient client(io.get_executor());
  Connect(client);
  std::vector<std::string> keys{"k"};
  auto first = Spawn(io, client.Wait(keys, 200ms));
  auto second = Spawn(io, client.Add("n", 1));
  Run([&] { return first->done && second->done; }, 2000ms);
  CHECK(first->message() == "");
  CHECK_THAT(second->message(), Catch::Contains("another operation is pending"));
}

// ---- Agent connections: tagged, so operations run side by side on one client.

// The same with one agent connection to the server, connected.
struct AgentFixture : StoreFixture {
  AgentFixture() { Connect(agent); }

  AsyncStoreClient agent{io.get_executor(), AsyncStoreClient::Options::Agent(2s, "")};
};

TEST_CASE_METHOD(AgentFixture,
                 "AsyncStoreClient: one agent connection runs two Waits, a Set and a Get at once",
                 "[rendezvous][async_client][tagged]") {
  auto wait_a = Spawn(io, agent.Wait(std::vector<std::string>{"a"}, 5s));
  auto wait_b = Spawn(io, agent.Wait(std::vector<std::string>{"b"}, 5s));
  auto set = Spawn(io, agent.Set("c", "v"));
  auto get = Spawn(io, agent.Get("c"));
  Run([&] { return set->done && get->done; }, 2000ms);
  CHECK(set->message() == "");
  CHECK(get->get() == "v");
  CHECK_FALSE(wait_a->done);
  CHECK_FALSE(wait_b->done);
  auto set_b = Spawn(io, agent.Set("b", ""));
  Run([&] { return wait_b->done; }, 2000ms);
  CHECK(wait_b->get());
  CHECK_FALSE(wait_a->done);
  auto set_a = Spawn(io, agent.Set("a", ""));
  Run([&] { return wait_a->done; }, 2000ms);
  CHECK(wait_a->get());
  CHECK(server.connection_count() == 1);
}

TEST_CASE_METHOD(AgentFixture, "AsyncStoreClient: one Wait's timeout cancels that wait only",
                 "[rendezvous][async_client][tagged]") {
  auto started = Clock::now();
  auto short_wait = Spawn(io, agent.Wait(std::vector<std::string>{"a"}, 100ms));
  auto long_wait = Spawn(io, agent.Wait(std::vector<std::string>{"b"}, 5s));
  auto counted = SpawnBody(io, [&]() -> asio::awaitable<int64_t> {
    int64_t last = 0;
    for (int i = 0; i < 20; ++i) {
      last = co_await agent.Add("n", 1);
      co_await Sleep(10ms);
    }
    co_return last;
  });
  Run([&] { return short_wait->done && counted->done; }, 3000ms);
  CHECK(short_wait->message() == "");
  CHECK_FALSE(short_wait->get());
  CHECK(Clock::now() - started >= 100ms);
  CHECK(counted->get() == 20);
  CHECK_FALSE(long_wait->done);
  CHECK(agent.connected());
  auto set_b = Spawn(io, agent.Set("b", ""));
  Run([&] { return long_wait->done; }, 2000ms);
  CHECK(long_wait->get());
  // The cancelled wait left nothing behind: its key appearing now changes nothing.
  auto set_a = Spawn(io, agent.Set("a", ""));
  auto after = Spawn(io, agent.Add("n", 1));
  Run([&] { return after->done; }, 2000ms);
  CHECK(after->get() == 21);
}

TEST_CASE_METHOD(AgentFixture,
                 "AsyncStoreClient: closing a view ends its operations only, and cancels its waits",
                 "[rendezvous][async_client][tagged]") {
  AsyncStoreClient& owner = agent;
  AsyncStoreClient view(owner, 2s);
  auto view_wait =
      Spawn(io, view.Wait(std::vector<std::string>{"k"}, std::chrono::hours(24 * 400)));
  auto view_check = Spawn(io, view.Wait(std::vector<std::string>{"j"}, 5s));
  auto owner_wait = Spawn(io, owner.Wait(std::vector<std::string>{"k"}, 5s));
  RunFor(100ms);
  view.Close();
  Run([&] { return view_wait->done && view_check->done; }, 1000ms);
  CHECK_THAT(view_wait->message(), Catch::Contains("WAIT 'k' failed"));
  CHECK_THAT(view_wait->message(), Catch::Contains("closed"));
  CHECK_THAT(view_check->message(), Catch::Contains("closed"));
  CHECK_FALSE(owner_wait->done);
  CHECK(owner.connected());
  CHECK_FALSE(view.connected());
  auto refused = Spawn(io, view.Add("n", 1));
  Run([&] { return refused->done; }, 1000ms);
  CHECK_THAT(refused->message(), Catch::Contains("closed"));
  auto set = Spawn(io, owner.Set("k", ""));
  auto counted = Spawn(io, owner.Add("n", 1));
  Run([&] { return owner_wait->done && counted->done; }, 2000ms);
  CHECK(owner_wait->get());
  CHECK(counted->get() == 1);
}

TEST_CASE_METHOD(AgentFixture,
                 "AsyncStoreClient: a view fails once its owner closes the connection",
                 "[rendezvous][async_client][tagged]") {
  AsyncStoreClient& owner = agent;
  AsyncStoreClient view(owner, 2s);
  auto waiting = Spawn(io, view.Wait(std::vector<std::string>{"k"}, 5s));
  RunFor(50ms);
  owner.Close();
  Run([&] { return waiting->done; }, 1000ms);
  CHECK_THAT(waiting->message(), Catch::Contains("closed"));
  CHECK_FALSE(view.connected());
  // A view needs the tags of an agent connection.
  AsyncStoreClient plain(io.get_executor());
  CHECK_THROWS_AS(AsyncStoreClient(plain, 1s), std::logic_error);
}

}  // namespace
}  // namespace cpplaunch
