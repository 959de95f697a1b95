// https to a real etcd member that requires client certificates (made by openssl in
// tests/etcd/etcd_cluster.py), started once for this file.
#include "etcd_client/tls_module.h"

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
  static EtcdTestCluster cluster(1, /*tls=*/true);
  return cluster;
}

// The message of the EtcdError `task` throws ("" if it does not).
template <class T>
std::string ErrorOf(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  try {
    RunTask(io, std::move(task));
  } catch (const EtcdError& error) {
    CHECK(error.unreachable());
    return error.what();
  }
  return "";
}

TEST_CASE("https with the CA and a client certificate: requests and a watch", "[etcd_tls]") {
  boost::asio::io_context io;
  Client client(io.get_executor(), Etcd().Settings());
  int64_t revision = RunTask(io, client.Put("/tls/k", "secret"));
  CHECK(RunTask(io, client.Range("/tls/k")).kvs.at(0).value == "secret");
  std::vector<WatchEvent> events;
  auto watch = StartWatch(
      client, "/tls/k", "", revision,
      [&](const std::vector<WatchEvent>& batch) {
        events.insert(events.end(), batch.begin(), batch.end());
      },
      [](const std::string& why) { FAIL(why); });
  RunTask(io, client.Put("/tls/k", "again"));
  REQUIRE(RunUntil(
      io, [&] { return events.size() == 2; }, 5s));
  CHECK(events[1].kv.value == "again");
}

TEST_CASE("a client without a certificate is refused, in one line", "[etcd_tls]") {
  boost::asio::io_context io;
  ClientSettings settings = Etcd().Settings();
  settings.tls.cert_file.clear();
  settings.tls.key_file.clear();
  settings.request_timeout = 1s;
  Client client(io.get_executor(), settings);
  std::string message = ErrorOf(io, client.Range("/tls/k"));
  CHECK_THAT(message, Catch::StartsWith("etcd range '/tls/k' failed on every endpoint"));
  CHECK_THAT(message, Catch::Contains("certificate"));
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a member whose certificate the CA did not sign is refused", "[etcd_tls]") {
  boost::asio::io_context io;
  ClientSettings settings = Etcd().Settings();
  settings.tls.ca_file = settings.tls.cert_file;  // a certificate that is no CA of the server's
  settings.request_timeout = 1s;
  Client client(io.get_executor(), settings);
  CHECK_THAT(ErrorOf(io, client.Range("/tls/k")), Catch::Contains("certificate verify failed"));
}

TEST_CASE("plain http to an https member fails in one line", "[etcd_tls]") {
  boost::asio::io_context io;
  ClientSettings settings = Etcd().Settings();
  settings.https = false;
  settings.request_timeout = 1s;
  Client client(io.get_executor(), settings);
  std::string message = ErrorOf(io, client.Range("/tls/k"));
  CHECK_THAT(message, Catch::StartsWith("etcd range '/tls/k' failed on every endpoint"));
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("TLS files that cannot be used are named", "[etcd_json]") {
  TlsFiles files;
  files.cert_file = "/nonexistent/client.pem";
  CHECK_THROWS_WITH(MakeTlsContext(files),
                    "an etcd client certificate needs both a certificate file and its key file");
  files.key_file = "/nonexistent/client.key";
  CHECK_THROWS_WITH(MakeTlsContext(files), Catch::Contains("'/nonexistent/client.pem'"));
}

}  // namespace
}  // namespace cpplaunch::etcd
