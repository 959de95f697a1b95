#pragma once
// Facts about this host that the agent asks the system for: its fully qualified name, whether
// an address is one of its own, and the parts of this agent's node id. The only place the
// launcher resolves its own name or lists its interfaces. The first two block on the resolver.

#include <string>
#include <vector>

#include "rendezvous/core/node_id.h"

namespace cpplaunch {

// Python's socket.getfqdn(): the canonical name of gethostname() from the resolver (the
// hosts file first on most systems), or the plain host name when it does not resolve.
std::string FullyQualifiedHostName();

// True when `host` (numeric or a name) is an address of one of this host's interfaces:
// resolves `host` (getaddrinfo) and compares with getifaddrs(). False when it does not
// resolve. The real LocalAddressTest of multi_host_plan.h.
bool IsLocalAddress(const std::string& host);

// What gethostname() resolves to (getaddrinfo, the resolver's order), numeric; empty when it
// does not resolve. The address gloo in the workers binds and advertises is the first.
std::vector<std::string> HostNameAddresses();

// The name of the interface that holds `numeric` ("eth0"), or "" when none does.
std::string InterfaceOf(const std::string& numeric);

// This process's pid and a random part from the kernel (getrandom). Throws std::system_error
// when the kernel has no getrandom (older than 3.17).
NodeIdParts ThisAgentNodeIdParts();

}  // namespace cpplaunch
