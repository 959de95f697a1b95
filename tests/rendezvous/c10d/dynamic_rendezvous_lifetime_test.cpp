// A DynamicRendezvous destroyed while its Next() is suspended (a host that dies mid-join, an
// agent torn down on a signal): its coroutines must only unwind from then on, never run on in
// the freed object. Each case steps the io_context one handler at a time and destroys a
// rendezvous after every possible number of steps of a two-host join. A coroutine that ran on
// is a heap-use-after-free, which AddressSanitizer reports (CI runs this binary sanitized:
// tests/run_sanitized_unit_tests.sh); a plain build may crash, or not notice.

#include <catch2/catch.hpp>
#include <memory>

#include "rendezvous/c10d/dynamic_rendezvous.h"
#include "tests/rendezvous/rendezvous_test_support.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::RunUntil;
using testing::Spawn;

RendezvousSettings HostSettings(uint16_t port, int id) {
  RendezvousSettings settings;
  settings.run_id = "lifetime";
  settings.min_nodes = 2;
  settings.max_nodes = 2;
  settings.store_host = "127.0.0.1";
  settings.store_port = port;
  settings.master_addr = "127.0.0.1";
  settings.master_port = port;
  settings.self.node_id = "127.0.0.1_" + std::to_string(7000 + id);
  settings.self.addr = "127.0.0.1";
  settings.self.hostname = "host" + std::to_string(id);
  settings.self.nnodes_min = 2;
  settings.self.nnodes_max = 2;
  // A valid record: with 0 the host completing the round refuses it, every join fails there, and
  // each case waits a second for the other host to take over the admission.
  settings.self.local_world_size = 1;
  settings.join_timeout = 3s;
  settings.progress_interval = 20ms;
  // The progress sink belongs to the rendezvous' owner: a line after the destruction would be
  // written by a coroutine that ran on.
  settings.progress = [](const std::string&) {};
  return settings;
}

// Outcome of one stepped join: whether host b's Next() finished before b was destroyed (and
// whether it joined then), and how it ended if it did not.
struct SteppedJoin {
  bool finished_first = false;
  bool joined_first = false;
  bool done_after = false;
  bool failed_after = false;
};

SteppedJoin DestroyAfter(int steps) {
  asio::io_context io;
  StoreServer server(io, testing::LoopbackServer());
  auto a = std::make_unique<DynamicRendezvous>(io.get_executor(), HostSettings(server.port(), 0));
  auto b = std::make_unique<DynamicRendezvous>(io.get_executor(), HostSettings(server.port(), 1));
  auto ra = Spawn(io, a->Next(std::nullopt));
  // Steps are counted from b's first: a coroutine that never started has not yet read its object
  // (co_spawn only queues it), and destroying the object before that is not a mid-join death.
  auto b_started = std::make_shared<bool>(false);
  DynamicRendezvous* joining = b.get();
  auto rb = testing::SpawnBody(io, [b_started, joining]() -> asio::awaitable<RendezvousResult> {
    *b_started = true;
    co_return co_await joining->Next(std::nullopt);
  });
  while (!*b_started) io.run_one_for(1s);
  for (int i = 0; i < steps && !rb->done; ++i) io.run_one_for(1s);
  SteppedJoin result;
  result.finished_first = rb->done;
  result.joined_first = rb->done && rb->error == nullptr;
  b.reset();
  RunUntil(
      io, [&] { return rb->done; }, 2000ms);
  result.done_after = rb->done;
  result.failed_after = rb->error != nullptr;
  // a is destroyed mid-join as well, wherever it stands (waiting for b, usually).
  a.reset();
  RunUntil(
      io, [&] { return ra->done; }, 2000ms);
  return result;
}

TEST_CASE("Dynamic rendezvous destroyed at any step of its join never runs on",
          "[rendezvous][dynamic][lifetime]") {
  int destroyed_pending = 0;
  for (int steps = 0; steps < 5000; ++steps) {
    const SteppedJoin join = DestroyAfter(steps);
    if (join.finished_first) {
      // Left alone, the join completes: the cases before destroyed a working join.
      CHECK(join.joined_first);
      break;
    }
    ++destroyed_pending;
    INFO("destroyed after " << steps << " steps");
    REQUIRE(join.done_after);
    CHECK(join.failed_after);
  }
  CHECK(destroyed_pending > 10);  // connect, queue, admission, arming: many steps
}

}  // namespace
}  // namespace cpplaunch
