#pragma once
// Starting the store this agent hosts for the job (the workers' TCPStore, with
// TORCHELASTIC_USE_AGENT_STORE). Threads: the agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>

#include "launcher/agent/store_security.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {

// Listens on `addr`:`port` only. When the user did not choose the port (`port_was_chosen`
// false) and it is busy, the store listens on a free port instead and `say` tells why.
// `security`: the agents' secret and the allowed peer networks (docs/security.md).
// Throws StoreBindError otherwise.
std::unique_ptr<StoreServer> StartStore(boost::asio::io_context& io, const std::string& addr,
                                        int port, bool port_was_chosen,
                                        const std::function<void(const std::string&)>& say,
                                        const StoreSecurity& security = {});

}  // namespace cpplaunch
