#pragma once
// host[:port] as torchrun accepts it for --rdzv-endpoint and --master-addr. Pure.

#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

struct Endpoint {
  std::string host;  // brackets stripped: "::1", not "[::1]"
  int port = -1;     // -1 when the text named no port
  // "host:port", with brackets around an IPv6 literal.
  std::string ToString() const;
};

// Whether `c` may appear in a host name or IP literal: [A-Za-z0-9_.:-].
bool IsHostCharacter(char c);

// Parses "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 literal ("::1").
// Returns nullopt and fills *error for an empty host, a host with characters outside
// [A-Za-z0-9_.:-], or a port that is not 1-5 digits below 65536.
std::optional<Endpoint> ParseEndpoint(std::string_view text, std::string* error);

}  // namespace cpplaunch
