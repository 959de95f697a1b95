#include "launcher/status_tool/status_address.h"

#include "base/text.h"

namespace cpplaunch::status {

std::optional<StatusAddress> ParseStatusAddress(std::string_view text) {
  // The last colon separates the port: an unbracketed IPv6 address ("::1:8000") would be read
  // as host "::1", so brackets are required for IPv6, as in a URL.
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;
  }
  if (host.empty() || port_text.empty() || port_text.size() > 5) return std::nullopt;
  for (char c : port_text) {
    if (!IsDigit(c)) return std::nullopt;
  }
  int port = std::stoi(std::string(port_text));
  if (port < 1 || port > 65535) return std::nullopt;
  return StatusAddress{std::string(host), static_cast<uint16_t>(port)};
}

}  // namespace cpplaunch::status
