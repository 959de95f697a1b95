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

// One etcd request's bound, all its endpoints included: `base` (the client's 5 s), longer for a
// job whose agents' requests at one moment (their arrival, a round's completion) would queue in a
// lone member for longer (max_nodes x kEtcdQueuePerAgent: 4,000 agents' completion reads waited
// past 5 s in one member here, and each agent that gave up failed its join), and never past
// `join_timeout`: an unreachable cluster is still reported within the join.
inline constexpr std::chrono::milliseconds kEtcdQueuePerAgent{5};
std::chrono::milliseconds EtcdRequestTimeout(std::chrono::milliseconds base, int max_nodes,
                                             std::chrono::milliseconds join_timeout);

// Reads --rdzv-endpoint "h1[:port],h2[:port],..." and takes the client's TLS files and the key
// prefix from options.rdzv.etcd (--rdzv-conf etcd_prefix, protocol, cacert|ca_cert,
// cert|ssl_cert, key|ssl_cert_key, checked by the command line). nullopt with *error (one
// line) when the endpoints are malformed.
std::optional<EtcdSettings> PlanEtcd(const LaunchOptions& options, std::string* error);

}  // namespace cpplaunch
