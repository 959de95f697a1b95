#pragma once
// Starting the store this agent hosts for the job (the workers' TCPStore, with
// TORCHELASTIC_USE_AGENT_STORE). Threads: the agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "launcher/multihost/store_security.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {

// Listens on `addr`:`port` only. `chosen_by` is the option the user chose the port with
// ("--master-port", "--rdzv-endpoint"): a busy port is then a StoreBindError naming it. Empty:
// the user chose none, and a busy port moves the store to a free one, `say` telling why.
// Throws StoreBindError otherwise. The store takes at most StoreConnectionCap(the soft
// RLIMIT_NOFILE now, nproc_per_node) connections. `security`: the agents' secret, the allowed
// peer networks (docs/security.md) and the memory budget, whose refusals are told through `say`.
std::unique_ptr<StoreServer> StartStore(boost::asio::io_context& io, const std::string& addr,
                                        int port, const std::string& chosen_by,
                                        const std::function<void(const std::string&)>& say,
                                        int nproc_per_node = 1, const StoreSecurity& security = {});

// Descriptors the agent keeps for itself below its limit: the console, the loop, signals, the
// sentinel, its own store clients and listening socket (kFileReserveBase), and per worker its
// pidfd, two pipes' read ends, two log files and the child ends while starting it
// (kFileReservePerWorker). Connections beyond the cap are accepted and closed at once, so a
// flood of clients can never leave a restart without descriptors for its log files.
inline constexpr uint64_t kFileReserveBase = 256;
inline constexpr uint64_t kFileReservePerWorker = 8;
inline constexpr uint64_t kMaxStoreConnections = 16384;

// Pure: min(16384, fd_limit - reserve), at least 1 (a store that takes no connection is no
// store; with a limit below the reserve the agent cannot run its workers either).
std::size_t StoreConnectionCap(uint64_t fd_limit, int nproc_per_node);

}  // namespace cpplaunch
