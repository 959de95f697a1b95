#pragma once
// A lease kept alive in the background: an agent's liveness in etcd. Part of the etcd client's
// interface (include rendezvous/etcd/etcd_client.h).
//
// Threads: the executor's thread (the client's). Callbacks run there, never inside a call.
// Lifetime: the Client must outlive the KeptLease. Destroying it (or Client::Close()) stops the
// keep-alives without revoking: the lease then expires after its ttl.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "base/asio_coroutine.h"
#include "etcd_client/etcd_error.h"

namespace cpplaunch::etcd {

class Client;

class KeptLease {
 public:
  struct State;
  explicit KeptLease(std::shared_ptr<State> state);
  ~KeptLease();
  KeptLease(const KeptLease&) = delete;
  KeptLease& operator=(const KeptLease&) = delete;

  int64_t id() const;
  std::chrono::seconds ttl() const;  // as granted by etcd
  bool lost() const;                 // on_lost has run (or is about to)
  // Stops the keep-alives and revokes the lease (its keys are deleted). on_lost does not run.
  // Throws EtcdError if no endpoint answered.
  boost::asio::awaitable<void> Revoke();

 private:
  std::shared_ptr<State> state_;
};

// Grants a lease of `ttl` and renews it every ttl/3 until the KeptLease is destroyed or
// Revoke()d. `on_lost` runs once, on the executor, when etcd says the lease is gone (it expired
// or was revoked elsewhere) or when no endpoint answered for a whole ttl since the last renewal;
// the keep-alives then stop. Throws EtcdError when the grant fails.
boost::asio::awaitable<std::unique_ptr<KeptLease>> KeepLease(Client& client,
                                                             std::chrono::seconds ttl,
                                                             std::function<void()> on_lost);

}  // namespace cpplaunch::etcd
