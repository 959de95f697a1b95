#include "launcher/multihost/start_store.h"

#include <algorithm>
#include <cstdint>

#include "base/text.h"
#include "launcher/process/posix_sys.h"

namespace cpplaunch {

std::size_t StoreConnectionCap(uint64_t fd_limit, int nproc_per_node) {
  const uint64_t workers = nproc_per_node > 0 ? static_cast<uint64_t>(nproc_per_node) : 0;
  const uint64_t reserve = kFileReserveBase + kFileReservePerWorker * workers;
  if (fd_limit <= reserve) return 1;
  return static_cast<std::size_t>(std::min(kMaxStoreConnections, fd_limit - reserve));
}

std::unique_ptr<StoreServer> StartStore(boost::asio::io_context& io, const std::string& addr,
                                        int port, const std::string& chosen_by,
                                        const std::function<void(const std::string&)>& say,
                                        int nproc_per_node, const StoreSecurity& security) {
  StoreServerOptions options;
  options.bind_host = addr;
  options.port = static_cast<uint16_t>(port);
  options.max_connections = StoreConnectionCap(posix::CurrentFileLimit().soft, nproc_per_node);
  options.secret = security.secret;
  options.allowed_peers = security.allowed_peers;
  options.budget = security.budget;
  options.report = say;
  if (!chosen_by.empty()) options.port_option = chosen_by;
  try {
    return std::make_unique<StoreServer>(io, options);
  } catch (const StoreBindError& e) {
    // torchrun's default port 29500 is a frequent collision between jobs on one host; a port
    // the user did not pick is not worth failing the job for.
    if (!chosen_by.empty() || port == 0 || !e.address_in_use()) throw;
  }
  options.port = 0;
  auto store = std::make_unique<StoreServer>(io, options);
  say("port " + std::to_string(port) + " is busy; the store listens on port " +
      std::to_string(store->port()) + " instead (use --master-port to choose)");
  return store;
}

}  // namespace cpplaunch
