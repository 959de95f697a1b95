#pragma once
// One simulated agent of the etcd backend for bench/rendezvous_sim (--backend etcd): its own
// EtcdLink (client connections, lease) and its real EtcdRendezvous, set up as
// launcher/multihost/multi_host_session and multi_host_plan set them up for --rdzv-backend=etcd-v3
// with torchrun's default keep-alive (lease TTL 5 s x 3).
//
// Threads: everything on the executor's thread. Errors: the constructor throws
// etcd::EtcdError (kSetup) for an empty endpoint list; Next() throws as EtcdRendezvous::Next.

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <optional>
#include <string>

#include "rendezvous/etcd/etcd_link.h"
#include "rendezvous/etcd/etcd_rendezvous.h"

namespace cpplaunch {

// The etcd settings of a job of up to `max_nodes` agents whose --rdzv-endpoint is `endpoints`
// ("h:p[,h:p...]"), for a join of `join_timeout`; nullopt with *error (one line) when the
// endpoints are malformed.
std::optional<EtcdSettings> EtcdSimSettings(const std::string& endpoints, int max_nodes,
                                            std::chrono::milliseconds join_timeout,
                                            std::string* error);

class EtcdSimAgent {
 public:
  EtcdSimAgent(boost::asio::any_io_executor executor, RendezvousSettings settings,
               const EtcdSettings& etcd);
  Rendezvous& rendezvous() { return rendezvous_; }

 private:
  std::shared_ptr<EtcdLink> link_;
  EtcdRendezvous rendezvous_;
};

}  // namespace cpplaunch
