// Kept leases against one real etcd member, started once for this file.
#include "etcd_client/kept_lease.h"

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

std::string Key(const std::string& name) { return "/kept_lease_test/" + name; }

bool Exists(boost::asio::io_context& io, Client& client, const std::string& key) {
  return !RunTask(io, client.Range(key)).kvs.empty();
}

TEST_CASE("a kept lease outlives its ttl, and Revoke deletes its keys", "[etcd_lease]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  int lost = 0;
  auto lease = RunTask(io, KeepLease(client, 2s, [&] { ++lost; }));
  CHECK(lease->ttl() == 2s);
  RunTask(io, client.Put(Key("kept"), "x", lease->id()));
  RunUntil(
      io, [] { return false; }, 2800ms);  // past the ttl
  CHECK(Exists(io, client, Key("kept")));
  CHECK(lost == 0);
  RunTask(io, lease->Revoke());
  CHECK_FALSE(Exists(io, client, Key("kept")));
  RunUntil(
      io, [] { return false; }, 800ms);  // past the next renewal
  CHECK(lost == 0);
}

TEST_CASE("on_lost runs once when the lease is revoked elsewhere", "[etcd_lease]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  int lost = 0;
  auto lease = RunTask(io, KeepLease(client, 3s, [&] { ++lost; }));
  RunTask(io, client.RevokeLease(lease->id()));
  // The next renewal (every ttl/3) finds it gone.
  REQUIRE(RunUntil(
      io, [&] { return lost == 1; }, 3s));
  CHECK(lease->lost());
  RunUntil(
      io, [] { return false; }, 1200ms);
  CHECK(lost == 1);
}

TEST_CASE("destroying a kept lease stops the renewals: its keys expire", "[etcd_lease]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  auto lease = RunTask(io, KeepLease(client, 2s, [] { FAIL("on_lost after destruction"); }));
  RunTask(io, client.Put(Key("dropped"), "x", lease->id()));
  lease.reset();
  REQUIRE(RunUntil(
      io, [&] { return !Exists(io, client, Key("dropped")); }, 4s));
}

TEST_CASE("on_lost runs when no endpoint answers for a whole ttl", "[etcd_lease]") {
  boost::asio::io_context io;
  ClientSettings settings = Etcd().Settings();
  settings.request_timeout = 500ms;
  Client client(io.get_executor(), settings);
  int lost = 0;
  auto lease = RunTask(io, KeepLease(client, 2s, [&] { ++lost; }));
  Etcd().Stop(0);
  auto stopped = std::chrono::steady_clock::now();
  REQUIRE(RunUntil(
      io, [&] { return lost == 1; }, 5s));
  auto took = std::chrono::steady_clock::now() - stopped;
  // The last renewal was at most ttl/3 before the member went: lost within ttl of it.
  CHECK(took >= 1s);
  CHECK(took < 3s);
  Etcd().Start(0);
  // Back again: the same client grants and keeps leases as before.
  auto again = RunTask(io, KeepLease(client, 2s, [] {}));
  CHECK(again->id() != lease->id());
}

}  // namespace
}  // namespace cpplaunch::etcd
