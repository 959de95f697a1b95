#include "launcher/multihost/multi_host_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "parsed_options.h"

namespace cpplaunch {
namespace {

const NodeIdParts kIdParts{4242, 0x009f3a61};

using std::chrono::milliseconds;
using std::chrono::seconds;

LaunchOptions Options(std::vector<std::string> argv) {
  argv.push_back("train.py");
  return ParsedOptions(argv);
}

// A host probe that answers "local" for exactly one address.
LocalAddressTest LocalIs(std::string address) {
  return [address](const std::string& host) { return host == address; };
}

MultiHostPlan Plan(const std::vector<std::string>& argv, const LocalAddressTest& local) {
  std::string error;
  auto plan = PlanMultiHost(Options(argv), "node-a", kIdParts, local, &error);
  INFO(error);
  REQUIRE(plan);
  return *plan;
}

std::string PlanError(const std::vector<std::string>& argv) {
  std::string error;
  auto plan = PlanMultiHost(Options(argv), "node-a", kIdParts, LocalIs(""), &error);
  REQUIRE_FALSE(plan);
  return error;
}

TEST_CASE("a static job: node rank 0 hosts the store on --master-addr:--master-port") {
  const std::vector<std::string> job = {"--nnodes=2", "--master-addr=10.1.2.3",
                                        "--master-port=1234", "--nproc-per-node=3"};
  auto args = job;
  args.push_back("--node-rank=0");
  MultiHostPlan rank0 = Plan(args, LocalIs(""));
  CHECK_FALSE(rank0.dynamic);
  CHECK(rank0.host_store);
  CHECK(rank0.host_forced);  // node 0 must serve the store: a busy port is an error
  CHECK(rank0.store_host == "10.1.2.3");
  CHECK(rank0.store_port == 1234);
  // A static rendezvous waits for every node: no elastic range.
  CHECK(rank0.rendezvous.min_nodes == 2);
  CHECK(rank0.rendezvous.max_nodes == 2);
  CHECK(rank0.rendezvous.self.local_world_size == 3);

  args = job;
  args.push_back("--node-rank=1");
  MultiHostPlan rank1 = Plan(args, LocalIs("10.1.2.3"));  // even on the store's host
  CHECK_FALSE(rank1.host_store);
  CHECK(rank1.rendezvous.node_rank == 1);
}

TEST_CASE("a c10d job: the agent on the endpoint's address hosts the store, others join it") {
  const std::vector<std::string> args = {"--nnodes=1:3", "--rdzv-backend=c10d",
                                         "--rdzv-endpoint=10.0.0.7:5000", "--rdzv-id=job9"};
  MultiHostPlan on_endpoint = Plan(args, LocalIs("10.0.0.7"));
  CHECK(on_endpoint.dynamic);
  CHECK(on_endpoint.host_store);
  CHECK_FALSE(on_endpoint.host_forced);  // several agents on one host: the others join
  CHECK(on_endpoint.store_host == "10.0.0.7");
  CHECK(on_endpoint.store_port == 5000);
  CHECK(on_endpoint.run_id == "job9");
  CHECK(on_endpoint.rendezvous.min_nodes == 1);
  CHECK(on_endpoint.rendezvous.max_nodes == 3);
  CHECK(on_endpoint.channel.run_id == "job9");
  CHECK(on_endpoint.channel.store_port == 5000);

  MultiHostPlan elsewhere = Plan(args, LocalIs("10.0.0.8"));
  CHECK_FALSE(elsewhere.host_store);
}

TEST_CASE("a c10d endpoint without a port uses torchrun's 29400") {
  MultiHostPlan plan =
      Plan({"--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=head"}, LocalIs(""));
  CHECK(plan.store_host == "head");
  CHECK(plan.store_port == 29400);
}

TEST_CASE("rdzv-conf is_host overrides the address guess, both ways") {
  const std::vector<std::string> base = {"--nnodes=2", "--rdzv-backend=c10d",
                                         "--rdzv-endpoint=10.0.0.7:5000"};
  auto no = base;
  no.push_back("--rdzv-conf=is_host=false");
  MultiHostPlan not_host = Plan(no, LocalIs("10.0.0.7"));
  CHECK_FALSE(not_host.host_store);
  CHECK(not_host.host_forced);

  auto yes = base;
  yes.push_back("--rdzv-conf=is_host=1");
  MultiHostPlan host = Plan(yes, LocalIs(""));
  CHECK(host.host_store);
  CHECK(host.host_forced);
}

TEST_CASE("torchrun's rendezvous defaults, and fractions of seconds for short tests") {
  MultiHostPlan plan =
      Plan({"--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=h:1"}, LocalIs(""));
  CHECK(plan.rendezvous.timeout == seconds(900));
  CHECK(plan.rendezvous.join_timeout == seconds(600));
  CHECK(plan.rendezvous.last_call_timeout == seconds(30));
  CHECK(plan.rendezvous.close_timeout == seconds(30));
  CHECK(plan.rendezvous.read_timeout == seconds(60));
  CHECK(plan.channel.keep_alive_interval == seconds(5));
  CHECK(plan.channel.keep_alive_max_attempt == 3);
  CHECK(plan.channel.read_timeout == seconds(60));
  CHECK(plan.exit_barrier_timeout == seconds(300));

  MultiHostPlan quick = Plan({"--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=h:1",
                              "--rdzv-conf=keep_alive_interval=0.5,keep_alive_max_attempt=2,"
                              "last_call_timeout=1.25,read_timeout=7"},
                             LocalIs(""));
  CHECK(quick.channel.keep_alive_interval == milliseconds(500));
  CHECK(quick.channel.keep_alive_max_attempt == 2);
  CHECK(quick.rendezvous.last_call_timeout == milliseconds(1250));
  CHECK(quick.rendezvous.read_timeout == seconds(7));
  CHECK(Plan({"--nnodes=2", "--exit-barrier-timeout=2.5", "--rdzv-backend=c10d",
              "--rdzv-endpoint=h:1"},
             LocalIs(""))
            .exit_barrier_timeout == milliseconds(2500));
  CHECK(quick.channel.read_timeout == seconds(7));  // one read timeout for both
}

TEST_CASE("this agent's record: host name, a node id unique per process, its own sizes") {
  MultiHostPlan plan = Plan({"--nnodes=2:4", "--rdzv-backend=c10d", "--rdzv-endpoint=h:1",
                             "--max-restarts=3", "--nproc-per-node=2", "--local-addr=10.9.9.9"},
                            LocalIs(""));
  CHECK(plan.rendezvous.self.hostname == "node-a");
  CHECK(plan.rendezvous.self.node_id == "_4242_009f3a61");  // the pid and the random part
  CHECK(plan.rendezvous.self.addr == "10.9.9.9");
  CHECK(plan.rendezvous.self.local_world_size == 2);
  CHECK(plan.rendezvous.self.nnodes_min == 2);
  CHECK(plan.rendezvous.self.nnodes_max == 4);
  CHECK(plan.rendezvous.self.max_restarts == 3);
  CHECK(plan.rendezvous.max_restarts == 3);
}

TEST_CASE("malformed plans are one-line errors naming the option") {
  CHECK(PlanError({"--nnodes=2", "--rdzv-backend=c10d"}) ==
        "--rdzv-endpoint=host:port is required for a c10d rendezvous over several hosts "
        "(--nnodes=2)");
  CHECK(PlanError({"--nnodes=1:2", "--rdzv-backend=c10d"}).find("(--nnodes=1:2)") !=
        std::string::npos);
  // Malformed --rdzv-conf values are the command line's: tests/launcher/cli/rdzv_settings_test.
}

TEST_CASE("the store's secret goes to the rendezvous, the channel and the store") {
  StoreSecurity security;
  security.secret = "key bytes";
  std::string error;
  security.allowed_peers = *ParsePeerNetworks("10.0.0.0/8", &error);
  auto plan = PlanMultiHost(Options({"--nnodes=2", "--node-rank=0", "--master-addr=10.1.2.3"}),
                            "node-a", kIdParts, LocalIs(""), &error, security);
  REQUIRE(plan);
  CHECK(plan->rendezvous.secret == "key bytes");
  CHECK(plan->channel.secret == "key bytes");
  CHECK(plan->security.allowed_peers == security.allowed_peers);
  CHECK(Plan({"--nnodes=2", "--node-rank=0"}, LocalIs("")).rendezvous.secret.empty());
}

}  // namespace
}  // namespace cpplaunch
