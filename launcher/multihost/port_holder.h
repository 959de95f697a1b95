#pragma once
// Who holds a TCP port on this host, for the one line that refuses to join whatever holds the
// job's store port (issue 23: with a secret, an agent on the endpoint's host whose port is busy
// does not fall back to being a client of an unknown store). Linux only: /proc/net/tcp{,6} give
// the listening socket's inode, /proc/<pid>/fd the process that has it open.
// Threads: any; blocking (reads /proc once). Never throws.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

// Pure: the inodes of the sockets listening (state 0A) on local port `port` in the text of
// /proc/net/tcp or /proc/net/tcp6. Lines that do not parse are skipped.
std::vector<uint64_t> ListeningSocketInodes(std::string_view proc_net_tcp, int port);

// "pid 4242 (python3)" for the process (of those this agent may look at) that has a socket
// listening on `port` open; nullopt when none is found (another user's process without root,
// another network namespace, or no /proc).
std::optional<std::string> FindPortHolder(int port);

// The refusal when the job's store port `endpoint` (host:port) is busy and the agent has a secret:
// names the holder (`holder`, from FindPortHolder; nullopt: only the address) and the way out.
std::string BusyStorePortRefusal(const std::string& endpoint,
                                 const std::optional<std::string>& holder);

}  // namespace cpplaunch
