#pragma once
// An agent's status address as the command line and /status's `status_address` write it:
// "HOST:PORT", with an IPv6 address in brackets ("[::1]:8000"). Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch::status {

struct StatusAddress {
  std::string host;  // a name or an address, without brackets
  uint16_t port = 0;
};

// nullopt for text without a host, without a port, or with a port outside 1..65535.
std::optional<StatusAddress> ParseStatusAddress(std::string_view text);

}  // namespace cpplaunch::status
