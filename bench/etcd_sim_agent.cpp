#include "bench/etcd_sim_agent.h"

#include <algorithm>

#include "launcher/cli/options.h"
#include "launcher/multihost/etcd_plan.h"

namespace cpplaunch {

std::optional<EtcdSettings> EtcdSimSettings(const std::string& endpoints, int max_nodes,
                                            std::chrono::milliseconds join_timeout,
                                            std::string* error) {
  LaunchOptions options;
  options.rdzv_endpoint = endpoints;
  auto settings = PlanEtcd(options, error);
  if (!settings) return std::nullopt;
  // As multi_host_plan's etcd side: torchrun's keep-alive defaults give the lease TTL, and one
  // request's bound grows with the job, within the join.
  settings->lease_ttl = EtcdLeaseTtl(std::chrono::seconds(5), 3);
  settings->client.request_timeout =
      EtcdRequestTimeout(settings->client.request_timeout, max_nodes, join_timeout);
  return settings;
}

EtcdSimAgent::EtcdSimAgent(boost::asio::any_io_executor executor, RendezvousSettings settings,
                           const EtcdSettings& etcd)
    : link_(std::make_shared<EtcdLink>(executor, etcd, settings.run_id)),
      rendezvous_(executor, std::move(settings), link_) {}

}  // namespace cpplaunch
