#pragma once
// gloo in the workers advertises the address their host name resolves to (GLOO_SOCKET_IFNAME
// unset). Debian's /etc/hosts maps the host name to a loopback address, so in a job that spans
// hosts every worker tells the others "127.0.0.1" (or 127.0.1.1) and their connects fail with
// "connect [127.0.0.1]:1935: Connection refused". The agent knows this host's real address in
// the job: it warns at start, and names the cause again when a worker's connect failed so.
// Pure; thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

struct LoopbackFacts {
  std::string hostname;                 // gethostname()
  std::vector<std::string> name_addrs;  // what it resolves to, numeric, in the resolver's order
  std::string self_addr;                // this agent's address in the job
  std::string interface;                // the interface holding self_addr ("" unknown)
  bool other_hosts = false;             // a member of the round advertises another address
  bool ifname_set = false;              // GLOO_SOCKET_IFNAME is set
};

// The start-up warning (without "cpplaunch: warning: ") when the round has other hosts, this
// agent's own address is not loopback, GLOO_SOCKET_IFNAME is unset, and the host name resolves
// to a loopback address first (or not at all: gloo then falls back to loopback):
//   "this host's name vm resolves to 127.0.0.1, which the workers' gloo would give the other
//    hosts as their address; set GLOO_SOCKET_IFNAME=eth0 (the interface of 192.0.2.2, this
//    host's address in the job) on every host, or map vm to 192.0.2.2 in /etc/hosts"
std::optional<std::string> LoopbackWarning(const LoopbackFacts& facts);

// "127.0.0.1:1935" when one of `texts` holds gloo's "connect [<loopback>]:<port>: Connection
// refused", else "".
std::string RefusedLoopbackConnect(const std::vector<std::string>& texts);

// The failure report's line (without "cpplaunch: ") for such a refused connect in a job with
// other hosts; nullopt otherwise.
//   "a worker's gloo connect to 127.0.0.1:1935 was refused: a worker on another host advertised
//    a loopback address (its host name resolves to one, as in Debian's /etc/hosts); set
//    GLOO_SOCKET_IFNAME to the job network's interface on every host (here: eth0)"
std::optional<std::string> LoopbackConnectHint(const std::vector<std::string>& texts,
                                               const LoopbackFacts& facts);

}  // namespace cpplaunch
