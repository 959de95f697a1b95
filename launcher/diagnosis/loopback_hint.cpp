#include "launcher/diagnosis/loopback_hint.h"

#include <cctype>

#include "launcher/engine/advertised_address.h"

namespace cpplaunch {
namespace {

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

// IsLoopbackAddress, and an IPv4 loopback address written as IPv6 (::ffff:127.0.0.1).
bool Loopback(std::string_view numeric) {
  if (numeric.starts_with("::ffff:")) numeric.remove_prefix(7);
  return IsLoopbackAddress(numeric);
}

// The "<addr>:<port>" of one "connect [<addr>]:<port>: Connection refused" in `text` whose
// address is loopback, or "".
std::string RefusedIn(std::string_view text) {
  constexpr std::string_view kConnect = "connect [";
  constexpr std::string_view kRefused = ": Connection refused";
  for (auto at = text.find(kConnect); at != std::string_view::npos;
       at = text.find(kConnect, at + 1)) {
    const auto open = at + kConnect.size();
    const auto close = text.find(']', open);
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      continue;
    }
    const auto port_end = text.find(kRefused, close + 2);
    if (port_end == std::string_view::npos) continue;
    const std::string_view addr = text.substr(open, close - open);
    const std::string_view port = text.substr(close + 2, port_end - close - 2);
    if (AllDigits(port) && Loopback(addr)) {
      return std::string(addr) + ":" + std::string(port);
    }
  }
  return "";
}

std::string Fix(const LoopbackFacts& facts) {
  if (facts.interface.empty()) return "set GLOO_SOCKET_IFNAME to the job network's interface";
  return "set GLOO_SOCKET_IFNAME=" + facts.interface + " (the interface of " + facts.self_addr +
         ", this host's address in the job)";
}

}  // namespace

std::optional<std::string> LoopbackWarning(const LoopbackFacts& facts) {
  if (!facts.other_hosts || facts.ifname_set || facts.self_addr.empty() ||
      Loopback(facts.self_addr)) {
    return std::nullopt;
  }
  std::string what;
  if (facts.name_addrs.empty()) {
    what = "this host's name " + facts.hostname +
           " does not resolve, so the workers' gloo would fall back to a loopback address and "
           "give it to the other hosts";
  } else if (Loopback(facts.name_addrs.front())) {
    what = "this host's name " + facts.hostname + " resolves to " + facts.name_addrs.front() +
           ", which the workers' gloo would give the other hosts as their address";
  } else {
    return std::nullopt;
  }
  return what + "; " + Fix(facts) + " on every host, or map " + facts.hostname + " to " +
         facts.self_addr + " in /etc/hosts";
}

std::string RefusedLoopbackConnect(const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    std::string found = RefusedIn(text);
    if (!found.empty()) return found;
  }
  return "";
}

std::optional<std::string> LoopbackConnectHint(const std::vector<std::string>& texts,
                                               const LoopbackFacts& facts) {
  if (!facts.other_hosts) return std::nullopt;
  const std::string refused = RefusedLoopbackConnect(texts);
  if (refused.empty()) return std::nullopt;
  const std::string here = facts.interface.empty() ? "" : " (here: " + facts.interface + ")";
  return "a worker's gloo connect to " + refused +
         " was refused: a worker on another host advertised a loopback address (its host name "
         "resolves to one, as in Debian's /etc/hosts); set GLOO_SOCKET_IFNAME to the job "
         "network's interface on every host" +
         here;
}

}  // namespace cpplaunch
