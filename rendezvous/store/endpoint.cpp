#include "rendezvous/store/endpoint.h"

#include <algorithm>
#include <cctype>

namespace cpplaunch {
namespace {

// Only text that cannot be a host name or IP literal is refused here; whether the name resolves
// is found out when it is used, with a message that names the lookup.
bool ValidHost(std::string_view host) {
  return !host.empty() && std::all_of(host.begin(), host.end(), IsHostCharacter);
}

// torchrun's rule (_try_parse_port: ^[0-9]{1,5}$): plain digits only. Not base/text's
// ParsePythonInt, which would also take a sign, spaces and underscores ("+80", " 80", "8_0").
std::optional<int> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return std::nullopt;
  return port;
}

}  // namespace

std::string Endpoint::ToString() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return port < 0 ? h : h + ":" + std::to_string(port);
}

bool IsHostCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' ||
         c == '-';
}

std::optional<Endpoint> ParseEndpoint(std::string_view text, std::string* error) {
  Endpoint ep;
  std::string_view port_text;
  bool has_port = false;
  // Brackets are looked at first: inside them an IPv6 literal's own colons are not separators.
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      *error = "unbalanced '[' in endpoint '" + std::string(text) + "'";
      return std::nullopt;
    }
    ep.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        *error = "unexpected text after ']' in endpoint '" + std::string(text) + "'";
        return std::nullopt;
      }
      port_text = rest.substr(1);
      has_port = true;
    }
  } else if (size_t colon = text.find(':'); colon != std::string_view::npos &&
                                            text.find(':', colon + 1) == std::string_view::npos) {
    ep.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    has_port = true;
  } else {
    ep.host = std::string(text);  // no colon, or a bare IPv6 literal (which carries no port)
  }
  if (!ValidHost(ep.host)) {
    *error = "invalid host in endpoint '" + std::string(text) + "'";
    return std::nullopt;
  }
  if (has_port) {
    std::optional<int> port = ParsePort(port_text);
    if (!port) {
      *error = "invalid port in endpoint '" + std::string(text) + "' (expected 0-65535)";
      return std::nullopt;
    }
    ep.port = *port;
  }
  return ep;
}

}  // namespace cpplaunch
