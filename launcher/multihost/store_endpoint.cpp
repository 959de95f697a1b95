#include "launcher/multihost/store_endpoint.h"

#include "rendezvous/core/rendezvous.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {

bool IsDynamicRendezvous(const LaunchOptions& options) {
  return options.standalone || options.rdzv_backend == "c10d";
}

bool IsEtcdRendezvous(const LaunchOptions& options) {
  return !options.standalone &&
         (options.rdzv_backend == "etcd-v3" || options.rdzv_backend == "etcd" ||
          options.rdzv_backend == "etcd-v2");
}

std::optional<StoreEndpoint> ResolveStoreEndpoint(const LaunchOptions& options,
                                                  std::string* error) {
  const bool dynamic = IsDynamicRendezvous(options);
  if (IsEtcdRendezvous(options)) {
    return StoreEndpoint{options.master_addr, options.master_port, false};
  }
  // torchrun's get_rdzv_endpoint: --master-addr:--master-port only for a static job given no
  // endpoint.
  if (!dynamic && options.rdzv_endpoint.empty()) {
    return StoreEndpoint{options.master_addr, options.master_port, false};
  }
  auto endpoint =
      ParseEndpoint(options.rdzv_endpoint.empty() ? "localhost:" + std::to_string(kDefaultC10dPort)
                                                  : options.rdzv_endpoint,
                    error);
  if (!endpoint) {
    *error = "--rdzv-endpoint: " + *error;
    return std::nullopt;
  }
  const bool own_port = endpoint->port >= 0 || dynamic;
  const int port =
      endpoint->port >= 0 ? endpoint->port : (dynamic ? kDefaultC10dPort : options.master_port);
  return StoreEndpoint{endpoint->host, port, true, own_port ? "--rdzv-endpoint" : "--master-port"};
}

}  // namespace cpplaunch
