#pragma once
// The etcd side of a multi-host plan (--rdzv-backend=etcd-v3): the cluster's endpoints from
// --rdzv-endpoint, TLS and the key prefix from --rdzv-conf (options.rdzv.etcd), and the agent's
// lease TTL from torchrun's keep-alive keys. Pure.

#include <chrono>
#include <optional>
#include <string>

#include "launcher/cli/options.h"
#include "rendezvous/etcd/etcd_link.h"

namespace cpplaunch {

// etcd's client port, the default of torch's parse_rendezvous_endpoint(..., 2379).
inline constexpr int kDefaultEtcdPort = 2379;

// `keep_alive_interval` x `keep_alive_max_attempt` (the keys' values as the plan read them):
// the lease TTL, in whole seconds rounded up, at least 2 (etcd's minimum).
std::chrono::seconds EtcdLeaseTtl(std::chrono::milliseconds keep_alive_interval,
                                  int keep_alive_max_attempt);

// Reads --rdzv-endpoint "h1[:port],h2[:port],..." and takes the client's TLS files and the key
// prefix from options.rdzv.etcd (--rdzv-conf etcd_prefix, protocol, cacert|ca_cert,
// cert|ssl_cert, key|ssl_cert_key, checked by the command line). nullopt with *error (one
// line) when the endpoints are malformed.
std::optional<EtcdSettings> PlanEtcd(const LaunchOptions& options, std::string* error);

}  // namespace cpplaunch
