#pragma once
// The store port's allow-list of peer networks (docs/security.md): CIDR blocks of IPv4 and IPv6
// addresses; a connection from any other address is closed at accept. Pure.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

struct PeerNetwork {
  bool v4 = true;
  std::array<uint8_t, 16> address{};  // network byte order; IPv4 uses the first 4 bytes
  int prefix = 32;                    // leading bits that must match

  std::string ToString() const;  // "10.0.0.0/8", "fd00::/8"
  friend bool operator==(const PeerNetwork&, const PeerNetwork&) = default;
};

// Parses "10.0.0.0/8;192.168.1.7 fd00::/8": entries separated by ';', ',' or whitespace; an
// address without "/N" is a single host. An IPv4-mapped IPv6 entry (::ffff:10.0.0.0/104) is
// taken as the IPv4 network it maps. nullopt with *error (one line naming the entry) on a bad
// address or prefix, or when no entry is given.
std::optional<std::vector<PeerNetwork>> ParsePeerNetworks(std::string_view text,
                                                          std::string* error);

// True when `address` (numeric text, IPv4 or IPv6; an IPv4-mapped IPv6 address counts as its
// IPv4 address) lies in one of `networks`. An empty list allows everyone.
bool PeerAllowed(const std::vector<PeerNetwork>& networks, std::string_view address);

}  // namespace cpplaunch
