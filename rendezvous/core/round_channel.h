#pragma once
// The job-wide channel of one rendezvous round, as the agent uses it, whatever carries it:
// JobChannel (job_channel.h) over the agents' TCP store for the static and c10d backends,
// EtcdJobChannel (etcd_job_channel.h) over etcd for the etcd backend. Both give the same
// guarantees: the first round-end notice wins and every agent hears it (the root cause), a
// lost peer ends the round, and the exit barrier passes once every member arrived.
//
// Threads: everything on the executor's thread. The handler given at construction runs at most
// once, on that thread, with the round's end. Lifetime: Stop() (or the destructor) ends the
// channel's background work without calling the handler.

#include <chrono>

#include "base/asio_coroutine.h"
#include "rendezvous/core/node_info.h"
#include "rendezvous/core/rendezvous.h"

namespace cpplaunch {

class RoundChannel {
 public:
  template <class T>
  using Task = boost::asio::awaitable<T>;
  virtual ~RoundChannel() = default;

  // Connects and starts listening for the round's end. A notice written before Start() is
  // delivered at once. Throws when the channel's backend cannot be reached.
  virtual Task<void> Start() = 0;
  // Ends the round for every agent with `notice` unless another notice came first; returns the
  // notice that won (and delivers it to the handler if it was not delivered yet). Throws when
  // the backend cannot be reached.
  virtual Task<RoundEnd> EndRound(RoundEnd notice) = 0;
  // The exit barrier after this host's workers succeeded: true when every agent of the round
  // arrived within `timeout`, false on timeout. Throws after Stop() or without the backend.
  virtual Task<bool> ExitBarrier(std::chrono::milliseconds timeout) = 0;
  // After the barrier: an agent whose exit would take something away from the others waits (at
  // most `linger`) for them to leave; the others say so and return. Never throws.
  virtual Task<void> Depart(std::chrono::milliseconds linger) = 0;
  // Ends pending operations (they throw) without calling the handler.
  virtual void Stop() = 0;

  virtual bool ended() const = 0;
  virtual const RendezvousResult& round() const = 0;
};

}  // namespace cpplaunch
