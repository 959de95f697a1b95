#pragma once
// The job as one agent sees it: everything that differs between a single-host run (this agent
// is the whole world) and a multi-host one (rendezvous rounds, a job channel, an exit barrier)
// sits behind this interface, so the agent's story has no multi-host branches.
//
//   SingleHostJob (single_host_job.h): the world is this host; restarts are counted here.
//   MultiHostJob (multi_host_job.h): rounds through the store; every host decides alike.
//
// Threads: construct, call and destroy on the agent's loop thread; every callback runs there.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/exit_code.h"
#include "launcher/job/attempt_decision.h"
#include "launcher/process/supervisor.h"
#include "launcher/process/worker_group.h"
#include "rendezvous/core/rendezvous.h"
#include "worker_env/rank_layout.h"

namespace cpplaunch {

class StoreServer;

// One attempt's world, as agreed by the rendezvous.
struct Round {
  RankLayout layout;
  int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT of this attempt
  // MASTER_ADDR and MASTER_PORT: the agent's store, or (--worker-store=rank0) where worker
  // rank 0 will host the workers' store.
  std::string master_addr;
  int master_port = 0;
  int64_t round = 0;  // the rendezvous round (0 on a single host)
  // The round's hosts this agent knows: every member in a small job, in a large dynamic one
  // itself, group rank 0 and its heartbeat peers (round_assignment.h). Empty on a single host.
  std::vector<RoundPeer> hosts;
  // The node ids the job set aside so far (a host that kept failing, or a lost one a spare
  // replaced: quarantine.h). Empty on a single host.
  std::vector<std::string> set_aside;
};

// What a job may ask of the agent that runs it.
struct JobHooks {
  std::function<void(const std::string&)> say;   // a line on the agent's stderr
  std::function<void(const std::string&)> info;  // the same, when LOGLEVEL asks for INFO
  // The same at LOGLEVEL=DEBUG (each rendezvous and store step); empty otherwise, so that
  // nothing builds those lines.
  std::function<void(const std::string&)> debug;
  // Another host ended the round: print `line` and stop the local workers. Returns false (and
  // prints nothing) when none run.
  std::function<bool(const std::string& line)> stop_workers;
  // The local workers succeeded and the job waits for the other hosts (the exit barrier).
  std::function<void()> entered_exit_barrier;
};

class Job {
 public:
  using Ready = std::function<void(const Round&)>;
  // No attempt follows: the line to print ("" = none) before exiting with `code` (kFailure, or
  // kSuccess for a spare the job finished without).
  using Ended = std::function<void(const std::string& line, ExitCode code)>;
  using Decided = std::function<void(const AttemptDecision&)>;

  virtual ~Job() = default;

  virtual const std::string& run_id() const = 0;
  // The store's address as the workers see it (after HostStore: the bound port).
  virtual std::string store_addr() const = 0;
  virtual int store_port() const = 0;

  // Starts the store when this agent hosts it and returns it; null when this agent is a client
  // of another host's store. Throws StoreBindError or std::runtime_error.
  virtual std::unique_ptr<StoreServer> HostStore() = 0;

  // Agrees on the next attempt's world: exactly one of `ready` and `ended` runs (maybe before
  // this returns).
  virtual void Rendezvous(Ready ready, Ended ended) = 0;
  // Aborts a pending Rendezvous (its `ended` runs promptly).
  virtual void CancelRendezvous() = 0;

  // Every worker exit, before the supervisor sees it.
  virtual void OnWorkerExit(const WorkerExitEvent& event) = 0;
  // The supervisor is about to stop the local workers after the attempt's first failure: call
  // `proceed` once that failure is known to the other hosts (published before the teardown, so
  // every host names it as the root cause), at once when there are none, or after a short
  // bound when the store does not answer. May call it before returning.
  virtual void BeforeFailureTeardown(std::function<void()> proceed) = 0;
  // The agent received `signo` (in any state).
  virtual void OnSignal(int signo) = 0;
  // The agent itself failed (`message` is what it printed).
  virtual void OnAgentFailure(const std::string& message) = 0;
  // --hang-timeout found no progress (`notice` is what the agent said): the round ends for
  // every host, naming the hang, before the local workers dump their stacks and die.
  virtual void OnHang(const std::string& notice) = 0;

  // The attempt ended and its output is drained: `decided` runs once with what comes next.
  virtual void Conclude(const AttemptResult& result, Decided decided) = 0;

  // This agent serves its status endpoint at host:port (host may be a wildcard address): the
  // other hosts learn it with this host's rendezvous record, from the next join on. A single
  // host has nobody to tell.
  virtual void AdvertiseStatus(const std::string& /*host*/, int /*port*/) {}

  // Whether the store's host waits (bounded) at exit until the other hosts have hung up.
  virtual bool LingersForPeers() const = 0;
  // The job is over on this host: stop talking to the store (this host's own connections).
  virtual void HangUp() = 0;
};

}  // namespace cpplaunch
