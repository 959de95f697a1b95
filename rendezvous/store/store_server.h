#pragma once
// The TCPStore server the master agent hosts (docs/store_protocol.md): speaks PyTorch's c10d
// TCPStore protocol, legacy (<= 2.0) and modern (>= 2.1) dialect, detected per connection.
//
// Threads: runs entirely on the caller's io_context and starts no thread; construct, use and
// destroy it on the thread that runs that io_context (or before it runs). Every connection is
// an independent session: a stalled, slow or malicious client never delays another; a protocol
// error closes only that connection.
// Two namespaces (docs/security.md): connections that pass the agent handshake
// (agent_handshake.h) work on the agents' keys, every other connection on the workers' keys;
// neither can reach the other's, and waits and watches stay within their namespace.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rendezvous/store/peer_networks.h"
#include "rendezvous/store/store_budget.h"
#include "rendezvous/store/wire/wire_format.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace cpplaunch {

// The listening socket could not be set up. what() is one line, e.g. "cannot bind the store to
// 127.0.0.1:29500: Address already in use; choose another --master-port or --master-port=0".
class StoreServerImpl;

// What the server did so far (the status endpoint's metrics).
struct StoreCounters {
  uint64_t requests = 0;  // requests applied, both namespaces
  uint64_t refused = 0;   // refusals: requests over a limit, and connections not accepted
  // Agent handshakes refused for their proof (another secret, or none), and the last such peer
  // ("10.0.0.2"): the store's host names them when its rendezvous fails.
  uint64_t refused_handshakes = 0;
  std::string last_refused_peer;
  // Requests refused for the memory budget (a subset of `refused`), those of agent connections,
  // and the refusal to name when a run fails ("SET from the agent at 10.0.0.2:40000: storing
  // ... would exceed the store's memory budget of ..."): the last agent's if any (it ended that
  // agent's part in the job), else the first (the attacker's later ones repeat it).
  uint64_t budget_refusals = 0;
  uint64_t agent_budget_refusals = 0;
  std::string budget_refusal;
};

class StoreBindError : public std::runtime_error {
 public:
  explicit StoreBindError(const std::string& what, bool address_in_use = false)
      : std::runtime_error(what), address_in_use_(address_in_use) {}
  // The port is taken (EADDRINUSE), as opposed to an address this host does not have.
  bool address_in_use() const { return address_in_use_; }

 private:
  bool address_in_use_;
};

struct StoreServerOptions {
  // "::" listens on every IPv6 and IPv4 address (dual stack); anything else (an IP literal or a
  // name resolving to one) binds exactly that address.
  std::string bind_host = "::";
  uint16_t port = 0;               // 0: the OS picks a free port (see port())
  WireLimits limits;               // per-request caps; a request over them closes its connection
  size_t max_connections = 16384;  // further connections are accepted and closed at once
  // A session whose unsent output exceeds this is closed (a client that stops reading while
  // others' writes fan out to it). Must exceed the largest single reply.
  size_t max_output_bytes = size_t{256} * 1024 * 1024;
  // The agents' shared secret (key bytes; empty: none). Connections that pass the agent
  // handshake with it use the agents' namespace; every other connection uses the workers'
  // (docs/security.md).
  std::string secret;
  // Peers allowed to connect (empty: everyone). Others are closed at accept, with a
  // rate-limited line on stderr.
  std::vector<PeerNetwork> allowed_peers;
  // The memory budget of everything clients make the server hold, the reply size limit and the
  // watches per connection (store_budget.h). A client over them is refused: closed, and one line
  // goes to `report`.
  BudgetLimits budget;
  // Receives the refusal lines ("store: refused MULTI_GET from 10.0.0.2:40112: ..."), at most
  // one a second. Empty: they go to stderr.
  std::function<void(const std::string&)> report;
  // The option the port came from ("--master-port", "--rdzv-endpoint"): a busy port's error
  // names it, so the user changes the value that chose it.
  std::string port_option = "--master-port";
};

class StoreServer {
 public:
  // Binds and listens (backlog SOMAXCONN) before returning; accepting starts on `io`.
  // Throws StoreBindError.
  StoreServer(boost::asio::io_context& io, StoreServerOptions options);
  // Stops (see Stop()).
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  uint16_t port() const;  // the bound port (the chosen one when options.port was 0)
  // Closes the acceptor and every connection; pending handlers complete as cancelled.
  // Idempotent. The stored keys stay (key_count()).
  void Stop();

  size_t connection_count() const;
  // Calls `idle` once, posted on the io_context, when no connection is open (at once if none is
  // now; Stop() closing the last one counts). The store's host waits on it before exiting.
  void WhenIdle(std::function<void()> idle);
  size_t key_count() const;        // the workers' namespace
  size_t agent_key_count() const;  // the agents' namespace
  const StoreBudget& budget() const;
  StoreCounters counters() const;

 private:
  std::shared_ptr<StoreServerImpl> impl_;
};

}  // namespace cpplaunch
