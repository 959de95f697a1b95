// The etcd client against one real etcd member (tests/etcd/etcd_cluster.py), started once for
// this file: key-value operations, transactions, leases, errors.
#include "etcd_client/etcd_client.h"

#include <dirent.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/etcd_client/etcd_test_cluster.h"

namespace cpplaunch::etcd {
namespace {

using namespace std::chrono_literals;
using testing::EtcdTestCluster;
using testing::RunTask;

EtcdTestCluster& Etcd() {
  static EtcdTestCluster cluster(1);
  return cluster;
}

// A key prefix of its own for each test case.
std::string Prefix(const std::string& name) { return "/etcd_client_test/" + name + "/"; }

TEST_CASE("put, range (one key and a prefix) and delete", "[etcd_single]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string p = Prefix("kv");
  int64_t first = RunTask(io, client.Put(p + "a", "1"));
  int64_t second = RunTask(io, client.Put(p + "b", std::string("\0\xff", 2)));
  CHECK(second > first);

  RangeResult one = RunTask(io, client.Range(p + "a"));
  REQUIRE(one.kvs.size() == 1);
  CHECK(one.kvs[0].key == p + "a");
  CHECK(one.kvs[0].value == "1");
  CHECK(one.kvs[0].mod_revision == first);
  CHECK(one.kvs[0].version == 1);
  CHECK(one.revision >= second);

  RangeResult all = RunTask(io, client.Range(p, PrefixEnd(p)));
  REQUIRE(all.kvs.size() == 2);
  CHECK(all.count == 2);
  CHECK(all.kvs[1].value == std::string("\0\xff", 2));  // bytes, not text

  CHECK(RunTask(io, client.Range(p + "missing")).kvs.empty());
  CHECK(RunTask(io, client.Delete(p, PrefixEnd(p))) == 2);
  CHECK(RunTask(io, client.Range(p, PrefixEnd(p))).kvs.empty());
  CHECK(RunTask(io, client.Delete(p + "a")) == 0);
}

TEST_CASE("a transaction runs its success branch or shows the failure branch's range",
          "[etcd_single]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string key = Prefix("txn") + "state";
  std::vector<Compare> absent = {Compare::Absent(key)};
  std::vector<TxnOp> create = {TxnOp::Put(key, "v1")};
  std::vector<TxnOp> read = {TxnOp::Range(key)};
  TxnResult created = RunTask(io, client.Txn(absent, create, read));
  CHECK(created.succeeded);
  CHECK(created.ranges.empty());

  // The same create again fails, and its failure branch returns what is there.
  TxnResult lost = RunTask(io, client.Txn(absent, {TxnOp::Put(key, "v2")}, read));
  CHECK_FALSE(lost.succeeded);
  REQUIRE(lost.ranges.size() == 1);
  REQUIRE(lost.ranges[0].kvs.size() == 1);
  CHECK(lost.ranges[0].kvs[0].value == "v1");
  CHECK(lost.ranges[0].kvs[0].mod_revision == created.revision);

  // Compare-and-swap on the revision read.
  std::vector<Compare> unchanged = {
      Compare::ModRevision(key, Compare::Op::kEqual, lost.ranges[0].kvs[0].mod_revision)};
  TxnResult swapped = RunTask(io, client.Txn(unchanged, {TxnOp::Put(key, "v3")}, read));
  CHECK(swapped.succeeded);
  TxnResult stale = RunTask(io, client.Txn(unchanged, {TxnOp::Put(key, "v4")}, read));
  CHECK_FALSE(stale.succeeded);
  CHECK(stale.ranges.at(0).kvs.at(0).value == "v3");
  CHECK(RunTask(io, client.Txn({Compare::Value(key, Compare::Op::kEqual, "v3")},
                               {TxnOp::Delete(key)}, {}))
            .succeeded);
  CHECK(RunTask(io, client.Range(key)).kvs.empty());
}

TEST_CASE("a lease's keys live while it is renewed and go when it expires or is revoked",
          "[etcd_single]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string p = Prefix("lease");
  int64_t lease = RunTask(io, client.GrantLease(2s));
  CHECK(lease != 0);
  RunTask(io, client.Put(p + "alive", "x", lease));
  CHECK(RunTask(io, client.Range(p + "alive")).kvs.at(0).lease == lease);
  CHECK(RunTask(io, client.KeepAliveOnce(lease)) >= 2s);

  // Expiry: no renewal for longer than the ttl (etcd's minimum, 2 s).
  testing::RunUntil(
      io, [] { return false; }, 3500ms);
  CHECK(RunTask(io, client.Range(p + "alive")).kvs.empty());
  CHECK(RunTask(io, client.KeepAliveOnce(lease)) == 0s);
  // A put on the expired lease is etcd's refusal, one line.
  try {
    RunTask(io, client.Put(p + "late", "x", lease));
    FAIL("put on an expired lease succeeded");
  } catch (const EtcdError& error) {
    CHECK(error.kind() == EtcdError::Kind::kRefused);
    CHECK_THAT(error.what(), Catch::Contains("requested lease not found"));
    CHECK_THAT(error.what(), Catch::Contains(Etcd().endpoints[0].ToString()));
  }

  // Revoke deletes the attached keys at once; revoking again is not an error.
  int64_t other = RunTask(io, client.GrantLease(60s));
  RunTask(io, client.Put(p + "revoked", "x", other));
  RunTask(io, client.RevokeLease(other));
  CHECK(RunTask(io, client.Range(p + "revoked")).kvs.empty());
  RunTask(io, client.RevokeLease(other));
}

TEST_CASE("concurrent requests on one client", "[etcd_single]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string p = Prefix("concurrent");
  int done = 0;
  for (int i = 0; i < 20; ++i) {
    boost::asio::co_spawn(io, client.Put(p + std::to_string(i), "v"),
                          [&](std::exception_ptr error, int64_t) {
                            CHECK_FALSE(error);
                            ++done;
                          });
  }
  CHECK(testing::RunUntil(
      io, [&] { return done == 20; }, 10s));
  CHECK(RunTask(io, client.Range(p, PrefixEnd(p))).count == 20);
}

// How many of this process's descriptors are TCP connections to `port` (from /proc/net/tcp's
// established sockets and /proc/self/fd's socket inodes).
int ConnectionsTo(int port) {
  std::set<std::string> inodes;
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (state == "01" && std::stoi(remote.substr(remote.find(':') + 1), nullptr, 16) == port) {
      inodes.insert(inode);
    }
  }
  int count = 0;
  DIR* fds = opendir("/proc/self/fd");
  while (dirent* entry = readdir(fds)) {
    char target[64] = {};
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    if (readlink(path.c_str(), target, sizeof target - 1) <= 0) continue;
    std::string text = target;  // "socket:[12345]"
    if (text.rfind("socket:[", 0) == 0 && inodes.count(text.substr(8, text.size() - 9)) > 0) {
      ++count;
    }
  }
  closedir(fds);
  return count;
}

TEST_CASE("requests, a watch and a kept lease share one connection to the member",
          "[etcd_single]") {
  // gRPC multiplexes them: a job of N agents costs a member N descriptors (the gateway took 2N).
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  std::string p = Prefix("one_connection");
  auto lease = RunTask(io, KeepLease(client, 3s, [] {}));
  size_t events = 0;
  auto watch = StartWatch(
      client, p, PrefixEnd(p), 0,
      [&](const std::vector<WatchEvent>& batch) { events += batch.size(); },
      [](const std::string&) {});
  testing::RunUntil(
      io, [] { return false; }, 200ms);
  int done = 0;
  for (int i = 0; i < 10; ++i) {
    boost::asio::co_spawn(io, client.Put(p + std::to_string(i), "v", lease->id()),
                          [&](std::exception_ptr error, int64_t) {
                            CHECK_FALSE(error);
                            ++done;
                          });
  }
  CHECK(testing::RunUntil(
      io, [&] { return done == 10 && events == 10; }, 10s));
  // A renewal comes every second (ttl/3) on its own stream of the same connection.
  testing::RunUntil(
      io, [] { return false; }, 1500ms);
  CHECK_FALSE(lease->lost());
  CHECK(RunTask(io, client.Range(p, PrefixEnd(p))).count == 10);
  CHECK(ConnectionsTo(Etcd().endpoints[0].port) == 1);
}

TEST_CASE("every endpoint gone: one line naming each, within the request timeout",
          "[etcd_single]") {
  boost::asio::io_context io;
  ClientSettings settings;
  // Ports nothing listens on: etcd's own test members are elsewhere.
  settings.endpoints = {{"127.0.0.1", 1}, {"127.0.0.1", 9}};
  settings.request_timeout = 800ms;
  Client client(io.get_executor(), settings);
  auto started = std::chrono::steady_clock::now();
  try {
    RunTask(io, client.Put("/k", "v"));
    FAIL("put without etcd succeeded");
  } catch (const EtcdError& error) {
    CHECK(error.unreachable());
    std::string message = error.what();
    CHECK_THAT(message, Catch::StartsWith("etcd put '/k' failed on every endpoint (tried for"));
    CHECK_THAT(message, Catch::Contains("127.0.0.1:1: Connection refused"));
    CHECK_THAT(message, Catch::Contains("127.0.0.1:9: Connection refused"));
    CHECK(message.find('\n') == std::string::npos);
  }
  auto took = std::chrono::steady_clock::now() - started;
  CHECK(took >= 800ms);
  CHECK(took < 2s);
}

TEST_CASE("Close ends a pending request and refuses later ones", "[etcd_single]") {
  boost::asio::io_context io;
  ClientSettings settings;
  settings.endpoints = {{"127.0.0.1", 1}};  // retried until the timeout: pending for long
  settings.request_timeout = 30s;
  Client client(io.get_executor(), settings);
  std::exception_ptr failure;
  bool finished = false;
  boost::asio::co_spawn(io, client.Range("/k"), [&](std::exception_ptr error, RangeResult) {
    failure = error;
    finished = true;
  });
  testing::RunUntil(
      io, [] { return false; }, 100ms);
  client.Close();
  REQUIRE(testing::RunUntil(
      io, [&] { return finished; }, 2s));
  try {
    std::rethrow_exception(failure);
  } catch (const EtcdError& error) {
    CHECK(error.kind() == EtcdError::Kind::kClosed);
  }
  CHECK_THROWS_AS(RunTask(io, client.Range("/k")), EtcdError);
}

TEST_CASE("settings that cannot work are refused at construction", "[etcd_json]") {
  boost::asio::io_context io;
  CHECK_THROWS_WITH(Client(io.get_executor(), ClientSettings{}), "no etcd endpoint given");
  ClientSettings tls;
  tls.endpoints = {{"127.0.0.1", 2379}};
  tls.https = true;
  tls.tls.ca_file = "/nonexistent/ca.pem";
  CHECK_THROWS_WITH(Client(io.get_executor(), tls),
                    Catch::StartsWith("cannot use the etcd CA file '/nonexistent/ca.pem': "));
}

}  // namespace
}  // namespace cpplaunch::etcd
