#include "launcher/agent/start_store.h"

#include <cstdint>

namespace cpplaunch {

std::unique_ptr<StoreServer> StartStore(boost::asio::io_context& io, const std::string& addr,
                                        int port, bool port_was_chosen,
                                        const std::function<void(const std::string&)>& say,
                                        const StoreSecurity& security) {
  StoreServerOptions options;
  options.bind_host = addr;
  options.port = static_cast<uint16_t>(port);
  options.secret = security.secret;
  options.allowed_peers = security.allowed_peers;
  try {
    return std::make_unique<StoreServer>(io, options);
  } catch (const StoreBindError& e) {
    // torchrun's default port 29500 is a frequent collision between jobs on one host; a port
    // the user did not pick is not worth failing the job for.
    if (port_was_chosen || port == 0 || !e.address_in_use()) throw;
  }
  options.port = 0;
  auto store = std::make_unique<StoreServer>(io, options);
  say("port " + std::to_string(port) + " is busy; the store listens on port " +
      std::to_string(store->port()) + " instead (use --master-port to choose)");
  return store;
}

}  // namespace cpplaunch
