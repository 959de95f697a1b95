#pragma once
// The job's store when this agent serves it, and its last duty in a multi-host job: at exit the
// store's host stays up until the other hosts have hung up (the store's last connection closes),
// so that they read the round's end or a config error instead of finding the store gone; a
// bound covers a host that never hangs up. Empty when another host serves the store.
// Threads: the agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>

#include "rendezvous/store/store_server.h"

namespace cpplaunch {

class HostedStore {
 public:
  explicit HostedStore(boost::asio::io_context& io) : linger_timer_(io) {}

  // The store this agent serves (null: none).
  void Host(std::unique_ptr<StoreServer> server) { server_ = std::move(server); }
  bool hosted() const { return server_ != nullptr; }
  const StoreServer* server() const { return server_.get(); }

  // Calls `done` once the store has no connection left, or after `bound`, whichever comes
  // first (maybe both: `done` must tolerate a second call). REQUIRES: hosted().
  void Linger(std::chrono::milliseconds bound, std::function<void()> done);
  // No more lingering; the server stops (its connections close).
  void Stop();

 private:
  std::unique_ptr<StoreServer> server_;
  boost::asio::steady_timer linger_timer_;
};

}  // namespace cpplaunch
