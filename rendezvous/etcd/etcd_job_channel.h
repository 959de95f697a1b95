#pragma once
// The job channel of one round over etcd (RoundChannel, round_channel.h: its contract, threads
// and handler are stated there), for the etcd rendezvous:
//   - round end: the first notice is created once (a transaction on the end key's absence) and
//     every agent hears it through one watch of the job's keys, within milliseconds;
//   - lost peers: a member whose lease expired (it died, froze or lost etcd for a whole TTL)
//     loses its node record; the deletion reaches every agent through the same watch, and the
//     first agent listing it (the round's result lists this agent's peers, round_assignment.h:
//     its ring predecessor always does) ends the round with a kPeerLost notice naming it. No
//     heartbeats of its own: etcd's lease is the heartbeat;
//   - this agent's own lease lost (etcd unreachable for a whole TTL): a local kStoreLost end;
//   - the exit barrier: one key per arrived member, counted from the watch.
// Events come in revision order, so a peer that revokes its lease after the barrier passed is
// seen leaving after every arrival: never as a lost peer.

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>

#include "rendezvous/core/round_channel.h"
#include "rendezvous/etcd/etcd_link.h"

namespace cpplaunch {

class EtcdJobChannel final : public RoundChannel {
 public:
  using EndHandler = std::function<void(const RoundEnd&)>;

  EtcdJobChannel(boost::asio::any_io_executor executor, std::shared_ptr<EtcdLink> link,
                 RendezvousResult round, EndHandler on_end);
  ~EtcdJobChannel() override;
  EtcdJobChannel(const EtcdJobChannel&) = delete;
  EtcdJobChannel& operator=(const EtcdJobChannel&) = delete;

  Task<void> Start() override;
  Task<RoundEnd> EndRound(RoundEnd notice) override;
  Task<bool> ExitBarrier(std::chrono::milliseconds timeout) override;
  // Nothing outlives an agent here (the round's coordination is in etcd): returns at once.
  Task<void> Depart(std::chrono::milliseconds linger) override;
  void Stop() override;
  bool ended() const override;
  const RendezvousResult& round() const override;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cpplaunch
