#include "launcher/multihost/etcd_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "launcher/multihost/multi_host_plan.h"
#include "parsed_options.h"

namespace cpplaunch {
namespace {

const NodeIdParts kIdParts{4242, 0x009f3a61};

using std::chrono::milliseconds;
using std::chrono::seconds;

LaunchOptions Options(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"--nnodes=2:3", "--rdzv-id=job7"});
  argv.push_back("train.py");
  return ParsedOptions(argv);
}

EtcdSettings Etcd(const std::vector<std::string>& argv) {
  std::string error;
  auto settings = PlanEtcd(Options(argv), &error);
  INFO(error);
  REQUIRE(settings);
  return *settings;
}

std::string EtcdError(const std::vector<std::string>& argv) {
  std::string error;
  REQUIRE_FALSE(PlanEtcd(Options(argv), &error));
  return error;
}

TEST_CASE("etcd endpoints: a comma-separated list, port 2379 by default") {
  EtcdSettings s =
      Etcd({"--rdzv-backend=etcd-v3", "--rdzv-endpoint=10.0.0.1:2479, etcd-b ,[::1]:2000"});
  REQUIRE(s.client.endpoints.size() == 3);
  CHECK(s.client.endpoints[0].host == "10.0.0.1");
  CHECK(s.client.endpoints[0].port == 2479);
  CHECK(s.client.endpoints[1].host == "etcd-b");
  CHECK(s.client.endpoints[1].port == 2379);
  CHECK(s.client.endpoints[2].host == "::1");
  CHECK(s.client.endpoints[2].port == 2000);
  CHECK_FALSE(s.client.https);
  CHECK(s.prefix == "/cpplaunch/rdzv");

  CHECK(EtcdError({"--rdzv-backend=etcd-v3"}).find("--rdzv-endpoint=host[:port]") !=
        std::string::npos);
  CHECK(EtcdError({"--rdzv-backend=etcd", "--rdzv-endpoint=a:2379,,b"}) ==
        "--rdzv-endpoint: '': invalid host in endpoint ''");
  CHECK(EtcdError({"--rdzv-backend=etcd", "--rdzv-endpoint=a:99999"})
            .starts_with("--rdzv-endpoint: 'a:99999': "));
}

TEST_CASE("etcd TLS: protocol=https with the legacy and the etcd-v2 spellings of the files") {
  EtcdSettings legacy = Etcd({"--rdzv-backend=etcd", "--rdzv-endpoint=h:2379",
                              "--rdzv-conf=protocol=https,cacert=/ca.pem,cert=/c.pem,key=/k.pem"});
  CHECK(legacy.client.https);
  CHECK(legacy.client.tls.ca_file == "/ca.pem");
  CHECK(legacy.client.tls.cert_file == "/c.pem");
  CHECK(legacy.client.tls.key_file == "/k.pem");

  EtcdSettings v2 = Etcd({"--rdzv-backend=etcd-v2", "--rdzv-endpoint=h:2379",
                          "--rdzv-conf=protocol=https,ca_cert=/a,ssl_cert=/b,ssl_cert_key=/c"});
  CHECK(v2.client.tls.ca_file == "/a");
  CHECK(v2.client.tls.cert_file == "/b");
  CHECK(v2.client.tls.key_file == "/c");

  EtcdSettings ca_only = Etcd(
      {"--rdzv-backend=etcd-v3", "--rdzv-endpoint=h", "--rdzv-conf=protocol=https,cacert=/ca.pem"});
  CHECK(ca_only.client.https);
  CHECK(ca_only.client.tls.cert_file.empty());
  // Malformed TLS keys are the command line's errors: tests/launcher/cli/rdzv_settings_test.
}

TEST_CASE("etcd_prefix: the job's keys live below it") {
  CHECK(Etcd({"--rdzv-backend=etcd-v3", "--rdzv-endpoint=h", "--rdzv-conf=etcd_prefix=/team/a"})
            .prefix == "/team/a");
}

TEST_CASE("the lease TTL is keep_alive_interval x keep_alive_max_attempt, at least 2 s") {
  CHECK(EtcdLeaseTtl(milliseconds(5000), 3) == seconds(15));
  CHECK(EtcdLeaseTtl(milliseconds(1500), 3) == seconds(5));  // 4.5 s rounds up
  CHECK(EtcdLeaseTtl(milliseconds(200), 2) == seconds(2));   // etcd's minimum
  CHECK(EtcdLeaseTtl(milliseconds(1000), 0) == seconds(2));
}

TEST_CASE("an etcd request's bound grows with the job, within the join") {
  CHECK(EtcdRequestTimeout(milliseconds(5000), 8, seconds(600)) == milliseconds(5000));
  CHECK(EtcdRequestTimeout(milliseconds(5000), 1000, seconds(600)) == milliseconds(5000));
  CHECK(EtcdRequestTimeout(milliseconds(5000), 4000, seconds(600)) == milliseconds(20000));
  CHECK(EtcdRequestTimeout(milliseconds(5000), 10000, seconds(30)) == milliseconds(30000));
  CHECK(EtcdRequestTimeout(milliseconds(5000), 8, seconds(2)) == milliseconds(2000));
  std::string error;
  auto plan = PlanMultiHost(
      Options({"--rdzv-backend=etcd-v3", "--rdzv-endpoint=h", "--nnodes=2000:4000",
               "--rdzv-conf=join_timeout=900"}),
      "node-a", kIdParts, [](const std::string&) { return false; }, &error);
  INFO(error);
  REQUIRE(plan);
  CHECK(plan->etcd_settings.client.request_timeout == milliseconds(20000));
}

TEST_CASE("an etcd plan: no agent store, torchrun's timeouts, the lease from the keep-alive keys") {
  std::string error;
  auto plan = PlanMultiHost(
      Options({"--rdzv-backend=etcd-v3", "--rdzv-endpoint=10.0.0.1,10.0.0.2:2381",
               "--rdzv-conf=keep_alive_interval=1,keep_alive_max_attempt=4,last_call_timeout=2,"
               "timeout=30"}),
      "node-a", kIdParts, [](const std::string&) { return true; }, &error);
  INFO(error);
  REQUIRE(plan);
  CHECK(plan->etcd);
  CHECK(plan->dynamic);
  CHECK_FALSE(plan->host_store);
  CHECK(plan->etcd_settings.client.endpoints.size() == 2);
  CHECK(plan->etcd_settings.lease_ttl == seconds(4));
  CHECK(plan->rendezvous.min_nodes == 2);
  CHECK(plan->rendezvous.max_nodes == 3);
  CHECK(plan->rendezvous.last_call_timeout == milliseconds(2000));
  // The legacy backend's `timeout` bounds the join unless join_timeout is given.
  CHECK(plan->rendezvous.join_timeout == milliseconds(30000));
  auto both = PlanMultiHost(
      Options(
          {"--rdzv-backend=etcd", "--rdzv-endpoint=h", "--rdzv-conf=timeout=30,join_timeout=7"}),
      "node-a", kIdParts, [](const std::string&) { return false; }, &error);
  REQUIRE(both);
  CHECK(both->rendezvous.join_timeout == milliseconds(7000));
}

}  // namespace
}  // namespace cpplaunch
