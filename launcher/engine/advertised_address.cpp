#include "launcher/engine/advertised_address.h"

#include <algorithm>

#include "base/text.h"

namespace cpplaunch {
namespace {

bool IsIpv6(std::string_view numeric) { return numeric.find(':') != std::string_view::npos; }

bool IsLinkLocal(std::string_view numeric) {
  if (IsIpv6(numeric)) {
    return numeric.size() >= 4 &&
           (numeric.substr(0, 4) == "fe80" || numeric.substr(0, 4) == "FE80");
  }
  return numeric.substr(0, 8) == "169.254.";
}

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The address list of one "tcp://a,b:port" or "tcp6://[a],[b]:port" item, brackets removed.
std::vector<std::string> UriAddresses(std::string_view item, std::string_view scheme) {
  std::vector<std::string> addresses;
  if (item.substr(0, scheme.size()) != scheme) return addresses;
  std::string_view rest = item.substr(scheme.size());
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return addresses;
  for (std::string_view a : Split(rest.substr(0, colon), ',')) {
    if (a.size() >= 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
    if (!a.empty()) addresses.emplace_back(a);
  }
  return addresses;
}

}  // namespace

bool IsLoopbackAddress(std::string_view numeric) {
  return numeric == "::1" || numeric.substr(0, 4) == "127.";
}

std::string ChooseAdvertisedAddress(const AddressFacts& facts) {
  if (facts.toward_launcher) return *facts.toward_launcher;
  for (const std::string& address : facts.host_name_addresses) {
    if (!IsLoopbackAddress(address) && Contains(facts.interface_addresses, address)) {
      return address;
    }
  }
  for (const bool want_ipv6 : {false, true}) {
    for (const std::string& address : facts.interface_addresses) {
      if (IsIpv6(address) == want_ipv6 && !IsLoopbackAddress(address) && !IsLinkLocal(address)) {
        return address;
      }
    }
  }
  return "127.0.0.1";
}

std::optional<std::string> LauncherAddressFromOmpiUri(std::string_view uri) {
  const std::vector<std::string_view> items = Split(uri, ';');
  for (const std::string_view scheme : {"tcp://", "tcp6://"}) {
    for (const std::string_view item : items) {
      const std::vector<std::string> addresses = UriAddresses(item, scheme);
      if (!addresses.empty()) return addresses.front();
    }
  }
  return std::nullopt;
}

}  // namespace cpplaunch
