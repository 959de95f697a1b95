#pragma once
// One agent's connection to the etcd cluster of a job, shared by its EtcdRendezvous and the
// EtcdJobChannel of each round: the client, the key layout, and the agent's lease. The lease is
// this agent's life as the others see it: its node record is attached to it and vanishes when
// the lease expires (the agent died, froze, or lost every etcd member for a whole TTL).
//
// Threads: everything on the executor's thread. Ownership: shared (std::shared_ptr) by the
// rendezvous and the channels; Close() ends every pending operation with etcd::EtcdError.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/asio_coroutine.h"
#include "etcd_client/etcd_client.h"
#include "rendezvous/core/node_info.h"
#include "rendezvous/etcd/etcd_keys.h"

namespace cpplaunch {

struct EtcdSettings {
  etcd::ClientSettings client;
  std::string prefix = std::string(kDefaultEtcdPrefix);  // --rdzv-conf etcd_prefix
  // The agent's lease: torchrun's keep_alive_interval x keep_alive_max_attempt (5 s x 3).
  std::chrono::seconds lease_ttl{15};
  // A free TCP port for the workers' store, offered anew before every round (the store of the
  // round is hosted by group rank 0's agent on the port it offered). Empty: offers 0.
  std::function<int()> offer_store_port;
};

class EtcdLink {
 public:
  template <class T>
  using Task = boost::asio::awaitable<T>;

  EtcdLink(boost::asio::any_io_executor executor, EtcdSettings settings, const std::string& run_id);
  ~EtcdLink();
  EtcdLink(const EtcdLink&) = delete;
  EtcdLink& operator=(const EtcdLink&) = delete;

  etcd::Client& client() { return client_; }
  const EtcdKeys& keys() const { return keys_; }
  const EtcdSettings& settings() const { return settings_; }
  // "h1:2379,h2:2379", for messages.
  std::string Endpoints() const;

  // Grants the lease and keeps it alive from then on; at once when it is held. Throws
  // etcd::EtcdError.
  Task<void> EnsureLease();
  int64_t lease() const;
  bool lease_lost() const { return lease_lost_; }
  // `fn` runs once (on the executor) when the lease is lost, or at once if it is already; it
  // replaces the previous listener (one round's channel at a time).
  void OnLeaseLost(std::function<void()> fn);
  // Best effort: the node record goes at once instead of after the TTL. Never throws.
  Task<void> RevokeLease();

  // Writes `notice` as the end of `round` unless one is there (a transaction on the key's
  // absence); returns the notice stored now: ours or the earlier one, the root cause.
  Task<RoundEnd> EndRound(int64_t round, RoundEnd notice);

  // The revision the current round's members were last seen alive at: the round's channel
  // watches for their departure from the next revision on.
  int64_t round_revision = 0;

  void Close();

 private:
  void LeaseLost();

  EtcdSettings settings_;
  EtcdKeys keys_;
  etcd::Client client_;
  std::unique_ptr<etcd::KeptLease> lease_;
  bool lease_lost_ = false;
  std::function<void()> on_lease_lost_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace cpplaunch
