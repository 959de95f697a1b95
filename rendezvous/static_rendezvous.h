#pragma once
// torchrun's static rendezvous (--nnodes=N --node-rank=R --master-addr=A --master-port=P): the
// agent of node rank 0 hosts the store on A:P (the launcher starts the server); every agent,
// node 0 included, connects, publishes its NodeInfo under its node rank, and waits until all N
// node ranks are there. Group rank = node rank; RANK offsets follow from the local world sizes.
// Hosts that disagree (--nnodes, --max-restarts, the same --node-rank twice) end the round with
// a config-error notice, so every host stops with the same message.
//
// Threads: Next()/Close() on the executor's thread; one call at a time.

#include <boost/asio/any_io_executor.hpp>

#include "rendezvous/rendezvous.h"
#include "rendezvous/store/async_store_client.h"

namespace cpplaunch {

class StaticRendezvous : public Rendezvous {
 public:
  StaticRendezvous(boost::asio::any_io_executor executor, RendezvousSettings settings);

  // Round numbers count up from 0; every new round is a failure restart (restart count + 1).
  // Waits at most settings.timeout (connecting included).
  Task<RendezvousResult> Next(std::optional<RoundTransition> previous) override;
  // Nothing to close for a static job (as torchrun).
  Task<void> Close(std::string reason) override;
  void Cancel() override { client_.Close(); }

 private:
  Task<std::vector<NodeInfo>> GatherNodes(int64_t round,
                                          AsyncStoreClient::Clock::time_point deadline);
  Task<void> CheckHost(int64_t round, AsyncStoreClient::Clock::time_point deadline);
  // nodes[i] is node rank first_rank + i.
  Task<void> CheckAgreement(int64_t round, const std::vector<NodeInfo>& nodes, int first_rank);
  // Publishes a config-error end of `round` and throws RendezvousError(message).
  Task<void> FailConfig(int64_t round, std::string message);
  std::string Where() const;  // "host-b (10.0.0.2)"

  RendezvousSettings settings_;
  AsyncStoreClient client_;
};

}  // namespace cpplaunch
