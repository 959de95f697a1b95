#include "launcher/engine/address_facts.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>

#include "base/socket_io.h"

namespace cpplaunch {
namespace {

std::optional<std::string> Numeric(const sockaddr* address, socklen_t length) {
  char text[NI_MAXHOST];
  if (::getnameinfo(address, length, text, sizeof(text), nullptr, 0, NI_NUMERICHOST) != 0) {
    return std::nullopt;
  }
  return std::string(text);
}

socklen_t LengthOf(const sockaddr* address) {
  return address->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

// The source address of the route to the launcher's daemon. The port is irrelevant to the
// routing decision; connecting a datagram socket needs one.
std::optional<std::string> TowardLauncher(const EnvMap& env) {
  const std::optional<std::string> uri = Lookup(env, "OMPI_MCA_orte_hnp_uri");
  if (!uri) return std::nullopt;
  const std::optional<std::string> launcher = LauncherAddressFromOmpiUri(*uri);
  if (!launcher) return std::nullopt;
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(launcher->c_str(), "9", &hints, &found) != 0) return std::nullopt;
  sockaddr_storage source{};
  const int error = RouteSourceAddress(found->ai_addr, found->ai_addrlen, &source);
  ::freeaddrinfo(found);
  if (error != 0) return std::nullopt;
  const auto* address = reinterpret_cast<const sockaddr*>(&source);
  return Numeric(address, LengthOf(address));
}

std::vector<std::string> HostNameAddresses() {
  char name[HOST_NAME_MAX + 1] = {};
  // gethostname does not promise a terminating NUL on truncation; the zeroed last byte is it.
  if (::gethostname(name, sizeof(name) - 1) != 0) return {};
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) != 0) return {};
  std::vector<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (std::optional<std::string> text = Numeric(a->ai_addr, a->ai_addrlen)) {
      addresses.push_back(*text);
    }
  }
  ::freeaddrinfo(found);
  return addresses;
}

std::vector<std::string> InterfaceAddresses() {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return {};
  std::vector<std::string> addresses;
  for (const ifaddrs* i = interfaces; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0) continue;
    const int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (std::optional<std::string> text = Numeric(i->ifa_addr, LengthOf(i->ifa_addr))) {
      addresses.push_back(*text);
    }
  }
  ::freeifaddrs(interfaces);
  return addresses;
}

}  // namespace

AddressFacts GatherAddressFacts(const EnvMap& env) {
  AddressFacts facts;
  facts.toward_launcher = TowardLauncher(env);
  facts.host_name_addresses = HostNameAddresses();
  facts.interface_addresses = InterfaceAddresses();
  return facts;
}

}  // namespace cpplaunch
