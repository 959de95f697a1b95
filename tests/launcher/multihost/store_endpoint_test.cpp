#include "launcher/multihost/store_endpoint.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "parsed_options.h"

namespace cpplaunch {
namespace {

LaunchOptions Options(std::vector<std::string> argv) {
  argv.push_back("train.py");
  return ParsedOptions(argv);
}

StoreEndpoint Resolve(const std::vector<std::string>& argv) {
  std::string error;
  auto store = ResolveStoreEndpoint(Options(argv), &error);
  INFO(error);
  REQUIRE(store);
  return *store;
}

TEST_CASE("IsDynamicRendezvous: c10d and --standalone, not static") {
  CHECK_FALSE(IsDynamicRendezvous(Options({})));
  CHECK(IsDynamicRendezvous(Options({"--rdzv-backend=c10d"})));
  CHECK(IsDynamicRendezvous(Options({"--standalone"})));
}

TEST_CASE("ResolveStoreEndpoint: a static job without an endpoint uses --master-addr:port") {
  StoreEndpoint store = Resolve({"--master-addr=10.1.2.3", "--master-port=1234"});
  CHECK(store.host == "10.1.2.3");
  CHECK(store.port == 1234);
  CHECK_FALSE(store.from_rdzv_endpoint);
}

TEST_CASE("ResolveStoreEndpoint: the endpoint wins, its port or a backend's default") {
  StoreEndpoint c10d = Resolve({"--rdzv-backend=c10d", "--rdzv-endpoint=[::1]:5000"});
  CHECK(c10d.host == "::1");
  CHECK(c10d.port == 5000);
  CHECK(c10d.from_rdzv_endpoint);
  // No port: c10d's 29400 for a dynamic job, --master-port for a static one.
  CHECK(Resolve({"--rdzv-backend=c10d", "--rdzv-endpoint=h"}).port == 29400);
  StoreEndpoint static_job =
      Resolve({"--rdzv-endpoint=h", "--master-addr=10.1.2.3", "--master-port=1234"});
  CHECK(static_job.host == "h");
  CHECK(static_job.port == 1234);
  CHECK(static_job.from_rdzv_endpoint);
}

TEST_CASE("ResolveStoreEndpoint names the option the store's port came from") {
  CHECK(Resolve({"--master-port=1234"}).port_option == "--master-port");
  CHECK(Resolve({"--rdzv-backend=c10d", "--rdzv-endpoint=h:5000"}).port_option ==
        "--rdzv-endpoint");
  CHECK(Resolve({"--rdzv-backend=c10d", "--rdzv-endpoint=h"}).port_option == "--rdzv-endpoint");
  CHECK(Resolve({"--rdzv-endpoint=h:5000"}).port_option == "--rdzv-endpoint");
  CHECK(Resolve({"--rdzv-endpoint=h", "--master-port=1234"}).port_option == "--master-port");
}

TEST_CASE("ResolveStoreEndpoint: c10d without an endpoint is localhost:29400, as torchrun") {
  StoreEndpoint store = Resolve({"--rdzv-backend=c10d"});
  CHECK(store.host == "localhost");
  CHECK(store.port == 29400);
  CHECK(store.from_rdzv_endpoint);
}

TEST_CASE("ResolveStoreEndpoint: a malformed endpoint is an error naming the option") {
  std::string error;
  CHECK_FALSE(
      ResolveStoreEndpoint(Options({"--rdzv-backend=c10d", "--rdzv-endpoint=a b:1"}), &error));
  CHECK(error.starts_with("--rdzv-endpoint: "));
}

}  // namespace
}  // namespace cpplaunch
