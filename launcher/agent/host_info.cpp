#include "launcher/agent/host_info.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <cstring>

extern char** environ;

namespace cpplaunch {

// Read once at start and passed down as a value: everything after main (options, worker
// environments) stays pure and testable with a made-up environment.
EnvMap ProcessEnvironment() {
  EnvMap env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    env.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), std::string(eq + 1));
  }
  return env;
}

// The name torchrun shows in failure reports and rendezvous records; computing it the same way
// keeps cpplaunch's reports and records interchangeable with torchrun's. Blocking (the
// resolver), so the agent asks once and only when it needs it.
std::string FullyQualifiedHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  // gethostname does not promise a terminating NUL on truncation; the zeroed last byte is it.
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  addrinfo hints{};
  hints.ai_flags = AI_CANONNAME;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  std::string fqdn = name;
  // The resolver's canonical name is what getfqdn finds for the usual hosts-file and DNS
  // setups; a name that does not resolve stays as it is.
  if (getaddrinfo(name, nullptr, &hints, &result) == 0) {
    if (result != nullptr && result->ai_canonname != nullptr) fqdn = result->ai_canonname;
    freeaddrinfo(result);
  }
  return fqdn;
}

}  // namespace cpplaunch
