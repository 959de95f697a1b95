#include "rendezvous/store/peer_networks.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>

#include "base/text.h"

namespace cpplaunch {
namespace {

namespace ip = boost::asio::ip;

// The address as a network with all its bits (v4-mapped IPv6 folded to IPv4); nullopt when not
// a numeric address.
std::optional<PeerNetwork> HostOf(std::string_view text) {
  boost::system::error_code ec;
  ip::address address = ip::make_address(std::string(text), ec);
  if (ec) return std::nullopt;
  PeerNetwork host;
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = ip::make_address_v4(ip::v4_mapped, address.to_v6());
  }
  if (address.is_v4()) {
    auto bytes = address.to_v4().to_bytes();
    std::copy(bytes.begin(), bytes.end(), host.address.begin());
    host.v4 = true;
    host.prefix = 32;
  } else {
    host.address = address.to_v6().to_bytes();
    host.v4 = false;
    host.prefix = 128;
  }
  return host;
}

bool Contains(const PeerNetwork& network, const PeerNetwork& host) {
  if (network.v4 != host.v4) return false;
  int bits = network.prefix;
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    const int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((network.address[i] & mask) != (host.address[i] & mask)) return false;
  }
  return true;
}

std::optional<PeerNetwork> ParseEntry(std::string_view entry, std::string* error) {
  const size_t slash = entry.find('/');
  const bool mapped_v6 = entry.substr(0, slash).find(':') != std::string_view::npos;
  std::optional<PeerNetwork> network = HostOf(entry.substr(0, slash));
  if (!network) {
    *error = "'" + std::string(entry) + "' is not an IP address or CIDR network";
    return std::nullopt;
  }
  if (slash == std::string_view::npos) return network;
  const std::string_view digits = entry.substr(slash + 1);
  std::optional<long long> prefix;
  if (!digits.empty() && digits.size() <= 3 && std::all_of(digits.begin(), digits.end(), IsDigit)) {
    prefix = ParsePythonInt(digits);
  }
  // A v6-written entry that folded to IPv4 keeps its IPv6 prefix length (96 + the IPv4 bits).
  const long long written_max = mapped_v6 ? 128 : network->prefix;
  const long long offset = mapped_v6 && network->v4 ? 96 : 0;
  if (!prefix || *prefix < offset || *prefix > written_max) {
    *error = "'" + std::string(entry) + "': the prefix length must be a number from " +
             std::to_string(offset) + " to " + std::to_string(written_max);
    return std::nullopt;
  }
  network->prefix = static_cast<int>(*prefix - offset);
  return network;
}

}  // namespace

std::string PeerNetwork::ToString() const {
  std::string text;
  if (v4) {
    ip::address_v4::bytes_type bytes;
    std::copy(address.begin(), address.begin() + 4, bytes.begin());
    text = ip::address_v4(bytes).to_string();
  } else {
    text = ip::address_v6(address).to_string();
  }
  return text + "/" + std::to_string(prefix);
}

std::optional<std::vector<PeerNetwork>> ParsePeerNetworks(std::string_view text,
                                                          std::string* error) {
  std::vector<PeerNetwork> networks;
  std::string entry;
  auto flush = [&]() -> bool {
    if (entry.empty()) return true;
    auto network = ParseEntry(entry, error);
    entry.clear();
    if (!network) return false;
    networks.push_back(*network);
    return true;
  };
  for (char c : text) {
    if (c == ';' || c == ',' || c == ' ' || c == '\t' || c == '\n') {
      if (!flush()) return std::nullopt;
    } else {
      entry.push_back(c);
    }
  }
  if (!flush()) return std::nullopt;
  if (networks.empty()) {
    *error = "the list of allowed peer networks is empty";
    return std::nullopt;
  }
  return networks;
}

bool PeerAllowed(const std::vector<PeerNetwork>& networks, std::string_view address) {
  if (networks.empty()) return true;
  std::optional<PeerNetwork> host = HostOf(address);
  if (!host) return false;
  for (const auto& network : networks) {
    if (Contains(network, *host)) return true;
  }
  return false;
}

}  // namespace cpplaunch
