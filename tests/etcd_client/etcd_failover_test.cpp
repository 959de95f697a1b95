// Failover in a real 3-member etcd cluster, started once for this file: the member a client
// and a running watch use goes away (SIGKILL); requests continue and the watch resumes on
// another member without losing or repeating an event.
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
  static EtcdTestCluster cluster(3);
  return cluster;
}

// Brings member i back at the end of a test case, also when it fails.
struct Restart {
  int i;
  ~Restart() { Etcd().Start(i); }
};

TEST_CASE("the loss of the member in use is invisible to requests and to a watch",
          "[etcd_cluster]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());  // member 0 first
  const std::string p = "/etcd_failover_test/";
  int64_t now = RunTask(io, client.Range(p)).revision;
  std::vector<WatchEvent> events;
  int ends = 0;
  auto watch = StartWatch(
      client, p, PrefixEnd(p), now + 1,
      [&](const std::vector<WatchEvent>& batch) {
        events.insert(events.end(), batch.begin(), batch.end());
      },
      [&](const std::string&) { ++ends; });
  int written = 0;
  for (; written < 5; ++written) RunTask(io, client.Put(p + "k", std::to_string(written)));
  REQUIRE(RunUntil(
      io, [&] { return events.size() == 5; }, 5s));

  Etcd().Stop(0);  // the member both the requests and the watch use
  Restart restart{0};
  auto stopped = std::chrono::steady_clock::now();
  {
    ClientSettings only_stopped = Etcd().Settings();
    only_stopped.endpoints.resize(1);
    only_stopped.request_timeout = 300ms;
    Client probe(io.get_executor(), only_stopped);
    CHECK_THROWS_WITH(RunTask(io, probe.Range(p)), Catch::Contains("Connection refused"));
  }
  for (; written < 10; ++written) RunTask(io, client.Put(p + "k", std::to_string(written)));
  CHECK(std::chrono::steady_clock::now() - stopped < 5s);
  REQUIRE(RunUntil(
      io, [&] { return events.size() == 10; }, 10s));
  RunUntil(
      io, [] { return false; }, 200ms);
  REQUIRE(events.size() == 10);  // none lost, none twice
  for (int i = 0; i < 10; ++i) CHECK(events[i].kv.value == std::to_string(i));
  CHECK(ends == 0);
  CHECK(RunTask(io, client.Range(p + "k")).kvs.at(0).value == "9");

  // Transactions and leases go on as well.
  int64_t lease = RunTask(io, client.GrantLease(5s));
  TxnResult txn =
      RunTask(io, client.Txn({Compare::Absent(p + "t")}, {TxnOp::Put(p + "t", "x", lease)}, {}));
  CHECK(txn.succeeded);
  CHECK(RunTask(io, client.KeepAliveOnce(lease)) > 0s);
}

TEST_CASE("a frozen member's request moves on to the next member after one attempt",
          "[etcd_cluster]") {
  // Its connection stays open and silent: the attempt's bound, not a broken connection, moves
  // the request on. A watch shares the connection (gRPC), so only the request's stream ends.
  boost::asio::io_context io;
  ClientSettings settings = Etcd().Settings();  // member 0 first
  settings.attempt_timeout = 300ms;
  settings.request_timeout = 8s;
  Client client(io.get_executor(), settings);
  const std::string key = "/etcd_failover_test/frozen";
  RunTask(io, client.Put(key, "1"));
  auto watch = StartWatch(
      client, key, "", 0, [](const std::vector<WatchEvent>&) {}, [](const std::string&) {});
  RunUntil(
      io, [] { return false; }, 200ms);
  Etcd().Freeze(0);
  struct Thaw {
    ~Thaw() { Etcd().Thaw(0); }
  } thaw;
  auto started = std::chrono::steady_clock::now();
  // Member 0 may have led the cluster: the others then elect a leader first (about a second).
  CHECK(RunTask(io, client.Put(key, "2")) > 0);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  // The next request starts on the member that answered.
  started = std::chrono::steady_clock::now();
  CHECK(RunTask(io, client.Range(key)).kvs.at(0).value == "2");
  CHECK(std::chrono::steady_clock::now() - started < 250ms);
}

TEST_CASE("a client whose first endpoint is down starts on the next", "[etcd_cluster]") {
  Etcd().Stop(1);
  Restart restart{1};
  boost::asio::io_context io;
  ClientSettings settings = Etcd().Settings();
  std::swap(settings.endpoints[0], settings.endpoints[1]);  // the stopped member first
  Client client(io.get_executor(), settings);
  auto started = std::chrono::steady_clock::now();
  RunTask(io, client.Put("/etcd_failover_test/first_down", "x"));
  CHECK(std::chrono::steady_clock::now() - started < 2s);
  std::vector<WatchEvent> events;
  int64_t now = RunTask(io, client.Range("/etcd_failover_test/first_down")).revision;
  auto watch = StartWatch(
      client, "/etcd_failover_test/first_down", "", now + 1,
      [&](const std::vector<WatchEvent>& batch) {
        events.insert(events.end(), batch.begin(), batch.end());
      },
      [](const std::string& why) { FAIL(why); });
  RunTask(io, client.Put("/etcd_failover_test/first_down", "y"));
  REQUIRE(RunUntil(
      io, [&] { return events.size() == 1; }, 5s));
}

}  // namespace
}  // namespace cpplaunch::etcd
