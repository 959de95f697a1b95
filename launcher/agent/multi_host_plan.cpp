#include "launcher/agent/multi_host_plan.h"

#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmath>
#include <cstring>
#include <set>

#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

// torchrun takes whole seconds; fractions are accepted too (tests use short heartbeats).
bool Seconds(const RdzvConfig& conf, const char* key, milliseconds fallback, milliseconds* out,
             std::string* error) {
  auto text = conf.Get(key);
  if (!text) {
    *out = fallback;
    return true;
  }
  char* end = nullptr;
  double value = std::strtod(text->c_str(), &end);
  if (text->empty() || *end != '\0' || !std::isfinite(value) || value < 0) {
    *error = std::string("The rendezvous configuration option '") + key +
             "' does not represent a valid number of seconds: '" + *text + "'";
    return false;
  }
  *out = milliseconds(static_cast<int64_t>(std::llround(value * 1000)));
  return true;
}

std::string Nnodes(const LaunchOptions& o) {
  if (o.min_nodes == o.max_nodes) return std::to_string(o.max_nodes);
  return std::to_string(o.min_nodes) + ":" + std::to_string(o.max_nodes);
}

bool ReadConf(const LaunchOptions& o, MultiHostPlan* plan, std::string* error) {
  const RdzvConfig& conf = o.rdzv_conf;
  RendezvousSettings& r = plan->rendezvous;
  JobChannel::Settings& c = plan->channel;
  // torchrun's defaults: timeout=900 is what the launcher adds to --rdzv-conf; join, last_call,
  // close and heartbeat are dynamic_rendezvous's RendezvousTimeout defaults; read_timeout is the
  // c10d backend's; keep_alive_interval 5 and keep_alive_max_attempt 3 come from its handler.
  if (!Seconds(conf, "timeout", std::chrono::seconds(900), &r.timeout, error) ||
      !Seconds(conf, "join_timeout", std::chrono::seconds(600), &r.join_timeout, error) ||
      !Seconds(conf, "last_call_timeout", std::chrono::seconds(30), &r.last_call_timeout, error) ||
      !Seconds(conf, "close_timeout", std::chrono::seconds(30), &r.close_timeout, error) ||
      !Seconds(conf, "read_timeout", std::chrono::seconds(60), &r.read_timeout, error) ||
      !Seconds(conf, "keep_alive_interval", std::chrono::seconds(5), &c.keep_alive_interval,
               error) ||
      !Seconds(conf, "heartbeat_timeout", std::chrono::seconds(5), &c.heartbeat_timeout, error)) {
    return false;
  }
  auto attempts = conf.GetInt("keep_alive_max_attempt", 3, error);
  if (!attempts) return false;
  if (*attempts < 1) {
    *error = "The rendezvous configuration option 'keep_alive_max_attempt' must be at least 1";
    return false;
  }
  c.keep_alive_max_attempt = static_cast<int>(*attempts);
  c.read_timeout = r.read_timeout;
  return true;
}

}  // namespace

std::optional<MultiHostPlan> PlanMultiHost(const LaunchOptions& o, const std::string& hostname,
                                           int pid, const LocalAddressTest& is_local_address,
                                           std::string* error) {
  MultiHostPlan plan;
  plan.dynamic = o.standalone || o.rdzv_backend == "c10d";
  plan.run_id = o.rdzv_id;
  if (!ReadConf(o, &plan, error)) return std::nullopt;
  if (plan.dynamic || !o.rdzv_endpoint.empty()) {
    if (o.standalone) {
      *error = "--standalone runs a single node; for --nnodes=" + std::to_string(o.max_nodes) +
               " use --rdzv-backend=c10d --rdzv-endpoint=HOST:PORT on every node";
      return std::nullopt;
    }
    if (o.rdzv_endpoint.empty()) {
      *error =
          "--rdzv-endpoint=host:port is required for a c10d rendezvous over several hosts "
          "(--nnodes=" +
          Nnodes(o) + ")";
      return std::nullopt;
    }
    auto endpoint = ParseEndpoint(o.rdzv_endpoint, error);
    if (!endpoint) {
      *error = "--rdzv-endpoint: " + *error;
      return std::nullopt;
    }
    plan.store_host = endpoint->host;
    plan.store_port =
        endpoint->port >= 0 ? endpoint->port : (plan.dynamic ? kDefaultC10dPort : o.master_port);
  } else {
    plan.store_host = o.master_addr;
    plan.store_port = o.master_port;
  }
  // Who serves the store: torchrun's is_host overrides; a static job has a fixed rank 0; a
  // c10d job guesses from the endpoint's address, since no rank is known before the rendezvous.
  auto forced = o.rdzv_conf.Get("is_host");
  if (forced) {
    auto value = o.rdzv_conf.GetBool("is_host", false, error);
    if (!value) return std::nullopt;
    plan.host_store = *value;
    plan.host_forced = true;
  } else if (!plan.dynamic) {
    plan.host_store = o.node_rank == 0;
    plan.host_forced = plan.host_store;
  } else {
    plan.host_store = is_local_address(plan.store_host);
  }

  RendezvousSettings& r = plan.rendezvous;
  r.run_id = plan.run_id;
  // A static rendezvous waits for every node: it has no elastic range.
  r.min_nodes = plan.dynamic ? o.min_nodes : o.max_nodes;
  r.max_nodes = o.max_nodes;
  r.node_rank = o.node_rank;
  r.max_restarts = o.max_restarts;
  r.store_host = plan.store_host;
  r.store_port = plan.store_port;
  r.master_addr = plan.store_host;
  r.master_port = plan.store_port;
  r.self.addr = o.local_addr.value_or("");
  // Unique among agents sharing a host name (several agents per host in loopback tests).
  r.self.node_id = "_" + std::to_string(pid);
  r.self.hostname = hostname;
  r.self.local_world_size = o.nproc_per_node;
  r.self.nnodes_min = o.min_nodes;
  r.self.nnodes_max = o.max_nodes;
  r.self.max_restarts = o.max_restarts;

  JobChannel::Settings& c = plan.channel;
  c.run_id = plan.run_id;
  c.store_host = plan.store_host;
  c.store_port = plan.store_port;
  return plan;
}

bool IsLocalAddress(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  // Raw address bytes compare IPv4 and IPv6 alike, whatever text form the user wrote.
  std::set<std::string> wanted;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(a->ai_addr);
      wanted.insert(std::string(reinterpret_cast<char*>(&in->sin_addr), 4));
    } else if (a->ai_family == AF_INET6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(a->ai_addr);
      wanted.insert(std::string(reinterpret_cast<char*>(&in6->sin6_addr), 16));
    }
  }
  ::freeaddrinfo(found);
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return false;
  bool local = false;
  for (ifaddrs* i = interfaces; i != nullptr && !local; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
      local = wanted.count(std::string(reinterpret_cast<char*>(&in->sin_addr), 4)) > 0;
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(i->ifa_addr);
      local = wanted.count(std::string(reinterpret_cast<char*>(&in6->sin6_addr), 16)) > 0;
    }
  }
  ::freeifaddrs(interfaces);
  return local;
}

}  // namespace cpplaunch
