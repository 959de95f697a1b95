#pragma once
// Where the job's store is, from the options, the same way for one host and several:
// --rdzv-endpoint for a c10d rendezvous (or any backend given an endpoint), else
// --master-addr/--master-port. Pure.

#include <optional>
#include <string>

#include "launcher/cli/options.h"

namespace cpplaunch {

// c10d (or --standalone, which is a one-host c10d) rather than the static rendezvous.
bool IsDynamicRendezvous(const LaunchOptions& options);
// --rdzv-backend etcd-v3, or etcd / etcd-v2 (the same backend): the endpoint names etcd.
bool IsEtcdRendezvous(const LaunchOptions& options);

struct StoreEndpoint {
  std::string host;  // as the user wrote it (endpoint host or master addr)
  int port = 0;
  bool from_rdzv_endpoint = false;  // read from --rdzv-endpoint (or its empty default)
  // The option the port came from: "--rdzv-endpoint" (its port, or c10d's default port for
  // an endpoint without one) or "--master-port".
  std::string port_option = "--master-port";
};

// torchrun's parse_rendezvous_endpoint: an empty --rdzv-endpoint is localhost with c10d's
// port; an endpoint without a port takes c10d's port (dynamic) or --master-port (static).
// With etcd the endpoint is etcd's, so the store is --master-addr/--master-port as for static.
// --standalone is not handled here (it picks its own address and port). Returns nullopt
// with *error = "--rdzv-endpoint: <why>" for a malformed endpoint.
std::optional<StoreEndpoint> ResolveStoreEndpoint(const LaunchOptions& options, std::string* error);

}  // namespace cpplaunch
