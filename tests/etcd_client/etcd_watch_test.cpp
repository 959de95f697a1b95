// Watches against one real etcd member, started once for this file: events in order, PUT and
// DELETE, history from a start revision, Cancel, compaction.
#include "etcd_client/etcd_watch.h"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "etcd_client/etcd_client.h"
#include "tests/etcd_client/etcd_test_cluster.h"

namespace cpplaunch::etcd {
namespace {

using namespace std::chrono_literals;
using testing::EtcdTestCluster;
using testing::RunTask;
using testing::RunUntil;

EtcdTestCluster& Etcd() {
  static EtcdTestCluster cluster(1);
  return cluster;
}

std::string Prefix(const std::string& name) { return "/etcd_watch_test/" + name + "/"; }

// What a watch reported.
struct Seen {
  std::vector<WatchEvent> events;
  int batches = 0;
  int ends = 0;
  std::string why;

  std::function<void(const std::vector<WatchEvent>&)> OnEvents() {
    return [this](const std::vector<WatchEvent>& batch) {
      ++batches;
      events.insert(events.end(), batch.begin(), batch.end());
    };
  }
  std::function<void(const std::string&)> OnEnd() {
    return [this](const std::string& reason) {
      ++ends;
      why = reason;
    };
  }
};

TEST_CASE("a watch reports puts and deletes in revision order", "[etcd_watch]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string p = Prefix("order");
  int64_t now = RunTask(io, client.Range(p)).revision;
  Seen seen;
  auto watch = StartWatch(client, p, PrefixEnd(p), now + 1, seen.OnEvents(), seen.OnEnd());
  int64_t first = RunTask(io, client.Put(p + "a", "1"));
  RunTask(io, client.Put(p + "b", "2"));
  RunTask(io, client.Put(p + "a", "3"));
  RunTask(io, client.Delete(p + "b"));
  RunTask(io, client.Put("/etcd_watch_test/elsewhere", "x"));  // outside the range
  REQUIRE(RunUntil(
      io, [&] { return seen.events.size() >= 4; }, 5s));
  RunUntil(
      io, [] { return false; }, 100ms);  // nothing more comes
  REQUIRE(seen.events.size() == 4);
  CHECK(seen.events[0].kind == WatchEvent::kPut);
  CHECK(seen.events[0].kv.key == p + "a");
  CHECK(seen.events[0].kv.value == "1");
  CHECK(seen.events[0].kv.mod_revision == first);
  CHECK(seen.events[1].kv.value == "2");
  CHECK(seen.events[2].kv.value == "3");
  CHECK(seen.events[2].kv.version == 2);
  CHECK(seen.events[3].kind == WatchEvent::kDelete);
  CHECK(seen.events[3].kv.key == p + "b");
  for (size_t i = 1; i < seen.events.size(); ++i) {
    CHECK(seen.events[i].kv.mod_revision == seen.events[i - 1].kv.mod_revision + 1);
  }
  CHECK(watch->next_revision() == seen.events[3].kv.mod_revision + 1);
  CHECK(seen.ends == 0);
}

TEST_CASE("a watch from a past revision delivers the history first", "[etcd_watch]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string key = Prefix("history") + "k";
  int64_t first = RunTask(io, client.Put(key, "old"));
  RunTask(io, client.Put(key, "newer"));
  Seen seen;
  auto watch = StartWatch(client, key, "", first, seen.OnEvents(), seen.OnEnd());
  REQUIRE(RunUntil(
      io, [&] { return seen.events.size() >= 2; }, 5s));
  CHECK(seen.events[0].kv.value == "old");
  CHECK(seen.events[1].kv.value == "newer");
}

TEST_CASE("after Cancel no callback runs, on_end included", "[etcd_watch]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string key = Prefix("cancel") + "k";
  int64_t now = RunTask(io, client.Range(key)).revision;
  Seen seen;
  auto watch = StartWatch(client, key, "", now + 1, seen.OnEvents(), seen.OnEnd());
  RunTask(io, client.Put(key, "1"));
  REQUIRE(RunUntil(
      io, [&] { return seen.events.size() == 1; }, 5s));
  watch->Cancel();
  RunTask(io, client.Put(key, "2"));
  RunUntil(
      io, [] { return false; }, 300ms);
  CHECK(seen.events.size() == 1);
  CHECK(seen.ends == 0);
}

TEST_CASE("a callback may destroy its own watch", "[etcd_watch]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string key = Prefix("self_destroy") + "k";
  int64_t now = RunTask(io, client.Range(key)).revision;
  std::unique_ptr<Watch> watch;
  int batches = 0;
  watch = StartWatch(
      client, key, "", now + 1,
      [&](const std::vector<WatchEvent>&) {
        ++batches;
        watch.reset();
      },
      [](const std::string&) { FAIL("on_end after destruction"); });
  RunTask(io, client.Put(key, "1"));
  REQUIRE(RunUntil(
      io, [&] { return batches == 1; }, 5s));
  RunTask(io, client.Put(key, "2"));
  RunUntil(
      io, [] { return false; }, 300ms);
  CHECK(batches == 1);
  CHECK(watch == nullptr);
}

TEST_CASE("a watch from a compacted revision ends with compact_revision", "[etcd_watch]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string key = Prefix("compacted") + "k";
  int64_t old = RunTask(io, client.Put(key, "1"));
  int64_t latest = RunTask(io, client.Put(key, "2"));
  RunTask(io, client.Compact(latest));
  Seen seen;
  auto watch = StartWatch(client, key, "", old, seen.OnEvents(), seen.OnEnd());
  REQUIRE(RunUntil(
      io, [&] { return seen.ends == 1; }, 5s));
  CHECK(seen.events.empty());
  CHECK(watch->compact_revision() == latest);
  CHECK(watch->end_reason() == seen.why);
  CHECK_THAT(seen.why,
             Catch::Contains("was compacted (compact_revision " + std::to_string(latest) + ")"));
  // The recovery the header describes: read, then watch from after the read.
  RangeResult read = RunTask(io, client.Range(key));
  CHECK(read.kvs.at(0).value == "2");
  Seen again;
  auto rewatch = StartWatch(client, key, "", read.revision + 1, again.OnEvents(), again.OnEnd());
  RunTask(io, client.Put(key, "3"));
  REQUIRE(RunUntil(
      io, [&] { return again.events.size() == 1; }, 5s));
  CHECK(again.events[0].kv.value == "3");
  CHECK(again.ends == 0);
}

TEST_CASE("a watch with no endpoint reachable ends, naming them", "[etcd_watch]") {
  boost::asio::io_context io;
  ClientSettings settings;
  settings.endpoints = {{"127.0.0.1", 1}};
  settings.request_timeout = 500ms;
  Client client(io.get_executor(), settings);
  Seen seen;
  auto watch = StartWatch(client, "/k", "", 0, seen.OnEvents(), seen.OnEnd());
  REQUIRE(RunUntil(
      io, [&] { return seen.ends == 1; }, 3s));
  CHECK_THAT(seen.why, Catch::StartsWith("the etcd watch of '/k' lost every endpoint"));
  CHECK_THAT(seen.why, Catch::Contains("127.0.0.1:1: Connection refused"));
}

}  // namespace
}  // namespace cpplaunch::etcd
