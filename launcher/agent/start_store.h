#pragma once
// Starting the store this agent hosts for the job (the workers' TCPStore, with
// TORCHELASTIC_USE_AGENT_STORE). Threads: the agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "launcher/cli/rdzv_config.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {

// Listens on `addr`:`port` only. When the user did not choose the port (`port_was_chosen`
// false) and it is busy, the store listens on a free port instead and `say` tells why.
// Throws StoreBindError otherwise.
// `budget` bounds what clients can make the store hold; refusals are told through `say`.
std::unique_ptr<StoreServer> StartStore(boost::asio::io_context& io, const std::string& addr,
                                        int port, bool port_was_chosen, const BudgetLimits& budget,
                                        const std::function<void(const std::string&)>& say);

// The store's limits from --rdzv-conf: `store_max_bytes` (the memory budget; a byte count with
// an optional K/M/G suffix, binary: 2G = 2 GiB; at least 16M). nullopt with *error (one line)
// when the value is malformed.
std::optional<BudgetLimits> StoreBudgetFromConf(const RdzvConfig& conf, std::string* error);

}  // namespace cpplaunch
