#pragma once
// Facts about this host and process that the agent reads once: its environment and its
// fully qualified name. The only place the launcher reads environ or resolves its own name.

#include <string>

#include "worker_env/env_map.h"

namespace cpplaunch {

// The process environment as a value (environ at the time of the call).
EnvMap ProcessEnvironment();

// Python's socket.getfqdn(): the canonical name of gethostname() from the resolver (the
// hosts file first on most systems), or the plain host name when it does not resolve.
std::string FullyQualifiedHostName();

}  // namespace cpplaunch
