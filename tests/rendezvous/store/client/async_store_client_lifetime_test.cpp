// An AsyncStoreClient closed or destroyed while an operation is pending: the operation ends with
// StoreError even when its reply had already arrived and only its coroutine's resumption was
// queued. Each test steps the io_context one handler at a time and ends the client after every
// possible number of steps, so the narrow window (reply decoded, coroutine not yet resumed) is
// always among them: a rendezvous destroyed there used to carry on in freed memory.

#include <catch2/catch.hpp>
#include <memory>

#include "rendezvous/store/client/async_store_client.h"
#include "tests/rendezvous/rendezvous_test_support.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::RunUntil;
using testing::Spawn;
using Clock = AsyncStoreClient::Clock;

// How the client is ended in the middle of an operation.
enum class Ending { kDestroy, kClose, kCloseView };

// Whether the operation finished before the client was ended, and how it finished.
struct Stepped {
  bool finished_first = false;
  bool done = false;
  bool failed = false;
};

// Connects a client (an agent one when `agent`), starts an ADD on it (or on a view of it), runs
// `steps` handlers, ends the client as `ending` says, and runs the io_context on until the ADD
// finished.
Stepped AddThenEnd(bool agent, Ending ending, int steps) {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto options = agent ? AsyncStoreClient::Options::Agent(2s, "") : AsyncStoreClient::Options{};
  auto client = std::make_unique<AsyncStoreClient>(io.get_executor(), options);
  auto connected = Spawn(io, client->Connect("127.0.0.1", server.port(), Clock::now() + 2s));
  RunUntil(
      io, [&] { return connected->done; }, 2000ms);
  connected->get();
  std::unique_ptr<AsyncStoreClient> view;
  if (ending == Ending::kCloseView) view = std::make_unique<AsyncStoreClient>(*client, 2s);
  AsyncStoreClient& user = view ? *view : *client;
  // Steps count from the ADD's start: co_spawn only queues a coroutine, and one that has not
  // started has not taken its hold on the connection yet.
  auto started = std::make_shared<bool>(false);
  AsyncStoreClient* adding = &user;
  auto added = testing::SpawnBody(io, [started, adding]() -> asio::awaitable<int64_t> {
    *started = true;
    co_return co_await adding->Add("n", 1);
  });
  io.restart();
  while (!*started) io.run_one_for(1s);
  for (int i = 0; i < steps && !added->done; ++i) io.run_one_for(1s);
  Stepped result;
  result.finished_first = added->done;
  switch (ending) {
    case Ending::kDestroy:
      client.reset();
      break;
    case Ending::kClose:
      client->Close();
      break;
    case Ending::kCloseView:
      view->Close();
      break;
  }
  RunUntil(
      io, [&] { return added->done; }, 2000ms);
  result.done = added->done;
  result.failed = added->error != nullptr;
  return result;
}

// Ends the client after 0, 1, 2, ... steps until the ADD finishes first; every ADD that was still
// pending must fail. Returns how many step counts ended it while it was pending.
int CheckEveryStep(bool agent, Ending ending) {
  int pending_at_end = 0;
  for (int steps = 0; steps < 1000; ++steps) {
    const Stepped stepped = AddThenEnd(agent, ending, steps);
    if (stepped.finished_first) break;
    ++pending_at_end;
    INFO("ended after " << steps << " steps");
    REQUIRE(stepped.done);
    CHECK(stepped.failed);
  }
  return pending_at_end;
}

TEST_CASE("AsyncStoreClient: an operation of a destroyed agent client never returns a value",
          "[rendezvous][async_client][lifetime]") {
  // The reply is read, then the call's coroutine resumes: at least two steps.
  CHECK(CheckEveryStep(true, Ending::kDestroy) >= 2);
}

TEST_CASE("AsyncStoreClient: an operation of a closed agent client or view never returns a value",
          "[rendezvous][async_client][lifetime]") {
  CHECK(CheckEveryStep(true, Ending::kClose) >= 2);
  CHECK(CheckEveryStep(true, Ending::kCloseView) >= 2);
}

TEST_CASE("AsyncStoreClient: an operation of a destroyed or closed PyTorch-wire client fails",
          "[rendezvous][async_client][lifetime]") {
  CHECK(CheckEveryStep(false, Ending::kDestroy) >= 2);
  CHECK(CheckEveryStep(false, Ending::kClose) >= 2);
}

TEST_CASE("AsyncStoreClient: a Connect whose client is destroyed midway fails",
          "[rendezvous][async_client][lifetime]") {
  int pending_at_end = 0;
  for (int steps = 0; steps < 1000; ++steps) {
    asio::io_context io;
    StoreServer server(io, testing::LoopbackServer());
    auto client = std::make_unique<AsyncStoreClient>(io.get_executor(),
                                                     AsyncStoreClient::Options::Agent(2s, ""));
    auto started = std::make_shared<bool>(false);
    AsyncStoreClient* connecting = client.get();
    const uint16_t port = server.port();
    auto connected = testing::SpawnBody(io, [started, connecting, port]() -> asio::awaitable<void> {
      *started = true;
      co_await connecting->Connect("127.0.0.1", port, Clock::now() + 2s);
    });
    while (!*started) io.run_one_for(1s);
    for (int i = 0; i < steps && !connected->done; ++i) io.run_one_for(1s);
    if (connected->done) break;
    ++pending_at_end;
    client.reset();
    RunUntil(
        io, [&] { return connected->done; }, 2000ms);
    INFO("destroyed after " << steps << " steps");
    REQUIRE(connected->done);
    CHECK(connected->error);
  }
  CHECK(pending_at_end >= 2);
}

}  // namespace
}  // namespace cpplaunch
