#pragma once
// The job channel of one round over the agents' TCP store (RoundChannel, round_channel.h: its
// contract, threads and handler are stated there), for the static and c10d backends:
//   - round end: every agent holds a pending WAIT on the round's "end" key; the first agent to
//     write a notice there (worker failure, agent stopped, lost peer, membership change, config
//     error) wins, and every agent hears it within milliseconds, without polling;
//   - heartbeats: every agent bumps its own counter key every keep_alive_interval / 4 and
//     watches the counters of the agents 1, 2, 4, ... group ranks after it (every other agent in
//     a job of up to 3; N log N reads a tick for the job, not N^2); a counter that stops changing
//     for keep_alive_interval x keep_alive_max_attempt marks that agent lost (local clocks only, no
//     clock sync needed); this is for hosts that vanish without closing their connections (power
//     loss, a frozen host, a cut network): an agent whose connection closes ends the round at once
//     through the will its rendezvous registered (ArmRound). The agent reporting a lapsed peer also
//     deletes the peer's liveness key, which releases its node rank for a replacement;
//   - the exit barrier after success, and a departure step so the agent hosting the store
//     outlives the others.
// An agent that loses the store (its host died, the network broke, no answer within
// heartbeat_timeout) ends the round locally with a kStoreLost notice.
//
// Connection: one per agent. Given the agent's connection (the rendezvous', which owns its
// liveness key and will), the channel works on views of it (AsyncStoreClient's view
// constructor): the WAIT on the end key, the heartbeats and the barrier are tagged requests on
// that one connection. Without one it opens its own, the same way.
// Lifetime: Stop() (or the destructor) also closes the channel's own connection, if it opened
// one, never the agent's; the background loops then end by themselves.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "base/asio_coroutine.h"
#include "rendezvous/core/node_info.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/round_channel.h"

namespace cpplaunch {

class AsyncStoreClient;

class JobChannel final : public RoundChannel {
 public:
  struct Settings {
    std::string run_id = "none";
    std::string store_host;
    int store_port = 0;
    std::chrono::milliseconds keep_alive_interval{std::chrono::seconds(5)};
    int keep_alive_max_attempt = 3;
    std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(5)};
    std::chrono::milliseconds read_timeout{std::chrono::seconds(60)};
    bool hosts_store = false;  // this agent runs the store server
    std::string secret;        // the agents' shared secret (RendezvousSettings::secret)
    std::function<void(const std::string&)> trace;  // RendezvousSettings::trace
  };
  using EndHandler = std::function<void(const RoundEnd&)>;

  // Opens a connection of its own in Start().
  JobChannel(boost::asio::any_io_executor executor, Settings settings, RendezvousResult round,
             EndHandler on_end);
  // Works on `connection` (a connected agent connection that outlives the channel's use; the
  // channel keeps its state alive, so a closed connection only fails the channel's operations).
  JobChannel(boost::asio::any_io_executor executor, Settings settings, RendezvousResult round,
             EndHandler on_end, AsyncStoreClient& connection);
  ~JobChannel() override;
  JobChannel(const JobChannel&) = delete;
  JobChannel& operator=(const JobChannel&) = delete;

  // RoundChannel's operations; what they throw is a StoreError. Start() first connects the
  // channel's own connection, if it has one (bounded by read_timeout), then arms the WAIT on the
  // round's end key and starts the heartbeats; it throws also when the agent's connection is
  // closed.
  Task<void> Start() override;
  Task<RoundEnd> EndRound(RoundEnd notice) override;
  Task<bool> ExitBarrier(std::chrono::milliseconds timeout) override;
  // The agent whose exit would take something from the others is the store's host.
  Task<void> Depart(std::chrono::milliseconds linger) override;
  // The channel's WAITs are cancelled on the wire; the agent's connection stays.
  void Stop() override;

  bool ended() const override;
  const RendezvousResult& round() const override;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cpplaunch
