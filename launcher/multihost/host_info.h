#pragma once
// Facts about this host that the agent asks the system for: its fully qualified name and
// whether an address is one of its own. The only place the launcher resolves its own name or
// lists its interfaces. Both block on the resolver.

#include <string>

namespace cpplaunch {

// Python's socket.getfqdn(): the canonical name of gethostname() from the resolver (the
// hosts file first on most systems), or the plain host name when it does not resolve.
std::string FullyQualifiedHostName();

// True when `host` (numeric or a name) is an address of one of this host's interfaces:
// resolves `host` (getaddrinfo) and compares with getifaddrs(). False when it does not
// resolve. The real LocalAddressTest of multi_host_plan.h.
bool IsLocalAddress(const std::string& host);

}  // namespace cpplaunch
