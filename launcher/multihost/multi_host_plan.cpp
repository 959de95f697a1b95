#include "launcher/multihost/multi_host_plan.h"

#include <algorithm>

#include "launcher/multihost/command_digest.h"
#include "launcher/multihost/etcd_plan.h"
#include "launcher/multihost/store_endpoint.h"

namespace cpplaunch {
namespace {

// A key not given keeps the settings' default, torchrun's: timeout=900 is what the launcher
// adds to --rdzv-conf; join, last_call, close and heartbeat are dynamic_rendezvous's
// RendezvousTimeout defaults; read_timeout is the c10d backend's; keep_alive_interval 5 and
// keep_alive_max_attempt 3 come from its handler.
void ApplyTimings(const RdzvTimings& t, MultiHostPlan* plan) {
  RendezvousSettings& r = plan->rendezvous;
  JobChannel::Settings& c = plan->channel;
  r.timeout = t.timeout.value_or(r.timeout);
  r.join_timeout = t.join_timeout.value_or(r.join_timeout);
  r.last_call_timeout = t.last_call_timeout.value_or(r.last_call_timeout);
  r.close_timeout = t.close_timeout.value_or(r.close_timeout);
  r.read_timeout = t.read_timeout.value_or(r.read_timeout);
  c.keep_alive_interval = t.keep_alive_interval.value_or(c.keep_alive_interval);
  c.heartbeat_timeout = t.heartbeat_timeout.value_or(c.heartbeat_timeout);
  c.keep_alive_max_attempt = t.keep_alive_max_attempt.value_or(c.keep_alive_max_attempt);
  c.read_timeout = r.read_timeout;
  r.keep_alive_interval = c.keep_alive_interval;
  r.keep_alive_max_attempt = c.keep_alive_max_attempt;
}

// Where the store is. One host may default its endpoint (--standalone, or localhost for an
// empty one); several hosts must all name the same one, so those defaults are errors here.
bool LocateStore(const LaunchOptions& o, MultiHostPlan* plan, std::string* error) {
  if (plan->dynamic || !o.rdzv_endpoint.empty()) {
    if (o.standalone) {
      *error = "--standalone runs a single node; for --nnodes=" + std::to_string(o.max_nodes) +
               " use --rdzv-backend=c10d --rdzv-endpoint=HOST:PORT on every node";
      return false;
    }
    if (o.rdzv_endpoint.empty()) {
      *error =
          "--rdzv-endpoint=host:port is required for a c10d rendezvous over several hosts "
          "(--nnodes=" +
          NnodesText(o.min_nodes, o.max_nodes) + ")";
      return false;
    }
  }
  auto store = ResolveStoreEndpoint(o, error);
  if (!store) return false;
  plan->store_host = store->host;
  plan->store_port = store->port;
  plan->store_port_option = store->port_option;
  return true;
}

// Who serves the store: torchrun's is_host overrides; a static job has a fixed rank 0; a
// c10d job guesses from the endpoint's address, since no rank is known before the rendezvous.
void DecideStoreHost(const LaunchOptions& o, const LocalAddressTest& is_local_address,
                     MultiHostPlan* plan) {
  if (o.rdzv.is_host) {
    plan->host_store = *o.rdzv.is_host;
    plan->host_forced = true;
  } else if (!plan->dynamic) {
    plan->host_store = o.node_rank == 0;
    plan->host_forced = plan->host_store;
  } else {
    plan->host_store = is_local_address(plan->store_host);
  }
}

void FillRendezvous(const LaunchOptions& o, const std::string& hostname, const NodeIdParts& id,
                    MultiHostPlan* plan) {
  RendezvousSettings& r = plan->rendezvous;
  r.run_id = plan->run_id;
  // A static rendezvous waits for every node: it has no elastic range.
  r.min_nodes = plan->dynamic ? o.min_nodes : o.max_nodes;
  r.max_nodes = o.max_nodes;
  r.node_rank = o.node_rank;
  r.max_restarts = o.max_restarts;
  r.quarantine_after = o.rdzv.quarantine_after.value_or(r.quarantine_after);
  r.segment = o.rdzv.segment;
  r.command_digest = CommandDigest(o);
  r.store_host = plan->store_host;
  r.store_port = plan->store_port;
  r.master_addr = plan->store_host;
  r.master_port = plan->store_port;
  r.secret = plan->security.secret;
  r.self.addr = o.local_addr.value_or("");
  // Unique among agents sharing an address, even with one pid (node_id.h); the address goes in
  // front once the rendezvous has connected.
  r.self.node_id = NodeIdSuffix(id);
  r.self.hostname = hostname;
  r.self.local_world_size = o.nproc_per_node;
  r.self.nnodes_min = o.min_nodes;
  r.self.nnodes_max = o.max_nodes;
  r.self.max_restarts = o.max_restarts;
}

// The legacy etcd backend's `timeout` bounds its whole rendezvous: it is the join timeout
// unless join_timeout is given too.
bool PlanEtcdSide(const LaunchOptions& o, MultiHostPlan* plan, std::string* error) {
  auto settings = PlanEtcd(o, error);
  if (!settings) return false;
  plan->etcd = true;
  plan->etcd_settings = std::move(*settings);
  plan->etcd_settings.lease_ttl =
      EtcdLeaseTtl(plan->channel.keep_alive_interval, plan->channel.keep_alive_max_attempt);
  if (o.rdzv.timings.timeout && !o.rdzv.timings.join_timeout) {
    plan->rendezvous.join_timeout = plan->rendezvous.timeout;
  }
  auto& request_timeout = plan->etcd_settings.client.request_timeout;
  request_timeout = EtcdRequestTimeout(request_timeout, o.max_nodes, plan->rendezvous.join_timeout);
  return true;
}

void FillChannel(MultiHostPlan* plan) {
  JobChannel::Settings& c = plan->channel;
  c.run_id = plan->run_id;
  c.store_host = plan->store_host;
  c.store_port = plan->store_port;
  c.secret = plan->security.secret;
}

}  // namespace

std::optional<MultiHostPlan> PlanMultiHost(const LaunchOptions& o, const std::string& hostname,
                                           const NodeIdParts& id,
                                           const LocalAddressTest& is_local_address,
                                           std::string* error, const StoreSecurity& security) {
  MultiHostPlan plan;
  plan.security = security;
  plan.dynamic = IsDynamicRendezvous(o) || IsEtcdRendezvous(o);
  plan.run_id = o.rdzv_id;
  plan.exit_barrier_timeout = o.exit_barrier_timeout;
  if (IsEtcdRendezvous(o)) {
    ApplyTimings(o.rdzv.timings, &plan);
    if (!PlanEtcdSide(o, &plan, error)) return std::nullopt;
    FillRendezvous(o, hostname, id, &plan);
    FillChannel(&plan);
    return plan;
  }
  ApplyTimings(o.rdzv.timings, &plan);
  if (!LocateStore(o, &plan, error)) return std::nullopt;
  DecideStoreHost(o, is_local_address, &plan);
  FillRendezvous(o, hostname, id, &plan);
  FillChannel(&plan);
  return plan;
}

}  // namespace cpplaunch
