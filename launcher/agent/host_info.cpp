#include "launcher/agent/host_info.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <cstring>

extern char** environ;

namespace cpplaunch {

EnvMap ProcessEnvironment() {
  EnvMap env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    env.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), std::string(eq + 1));
  }
  return env;
}

std::string FullyQualifiedHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  addrinfo hints{};
  hints.ai_flags = AI_CANONNAME;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  std::string fqdn = name;
  if (getaddrinfo(name, nullptr, &hints, &result) == 0) {
    if (result != nullptr && result->ai_canonname != nullptr) fqdn = result->ai_canonname;
    freeaddrinfo(result);
  }
  return fqdn;
}

}  // namespace cpplaunch
