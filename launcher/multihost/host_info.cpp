#include "launcher/multihost/host_info.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <set>

#include "base/crypto/random_bytes.h"

namespace cpplaunch {

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

namespace {

// The numeric text of an IPv4 or IPv6 socket address, "" for another family.
std::string Numeric(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) return text;
  } else if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    if (::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text)) != nullptr) return text;
  }
  return "";
}

}  // namespace

std::vector<std::string> HostNameAddresses() {
  char name[HOST_NAME_MAX + 1] = {};
  std::vector<std::string> found;
  if (gethostname(name, sizeof(name) - 1) != 0) return found;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &result) != 0) return found;
  for (addrinfo* a = result; a != nullptr; a = a->ai_next) {
    std::string text = Numeric(a->ai_addr);
    if (!text.empty()) found.push_back(std::move(text));
  }
  ::freeaddrinfo(result);
  return found;
}

std::string InterfaceOf(const std::string& numeric) {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return "";
  std::string name;
  for (ifaddrs* i = interfaces; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr != nullptr && Numeric(i->ifa_addr) == numeric) name = i->ifa_name;
  }
  ::freeifaddrs(interfaces);
  return name;
}

bool IsLocalAddress(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  // Raw address bytes compare IPv4 and IPv6 alike, whatever text form the user wrote.
  std::set<std::string> wanted;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(a->ai_addr);
      wanted.insert(std::string(reinterpret_cast<char*>(&in->sin_addr), 4));
    } else if (a->ai_family == AF_INET6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(a->ai_addr);
      wanted.insert(std::string(reinterpret_cast<char*>(&in6->sin6_addr), 16));
    }
  }
  ::freeaddrinfo(found);
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return false;
  bool local = false;
  for (ifaddrs* i = interfaces; i != nullptr && !local; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
      local = wanted.count(std::string(reinterpret_cast<char*>(&in->sin_addr), 4)) > 0;
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(i->ifa_addr);
      local = wanted.count(std::string(reinterpret_cast<char*>(&in6->sin6_addr), 16)) > 0;
    }
  }
  ::freeifaddrs(interfaces);
  return local;
}

NodeIdParts ThisAgentNodeIdParts() {
  NodeIdParts parts;
  parts.pid = static_cast<int>(::getpid());
  const std::string random = RandomBytes(sizeof parts.random);
  std::memcpy(&parts.random, random.data(), sizeof parts.random);
  return parts;
}

}  // namespace cpplaunch
