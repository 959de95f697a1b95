#pragma once
// The agent's side of a multi-host job, on the agent's io_context: joins rendezvous rounds,
// opens the round's job channel, publishes local events that end the round for every host,
// and runs the exit barrier. Wraps the coroutine API of rendezvous/ in callbacks for the
// agent's callback-driven loop.
//
// Threads: construct, call and destroy on the thread running `io`; every callback runs there.

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/asio_coroutine.h"
#include "launcher/multihost/multi_host_plan.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/round_channel.h"
#include "rendezvous/etcd/etcd_link.h"

namespace cpplaunch {

enum class FinishOutcome { kPassed, kTimedOut, kInterrupted };

class MultiHostSession {
 public:
  using Say = std::function<void(const std::string&)>;

  MultiHostSession(boost::asio::io_context& io, MultiHostPlan plan, Say say);
  ~MultiHostSession();
  MultiHostSession(const MultiHostSession&) = delete;
  MultiHostSession& operator=(const MultiHostSession&) = delete;

  const MultiHostPlan& plan() const { return plan_; }
  // Whether this agent ended up running the store (set once the agent bound it, or not).
  void set_hosts_store(bool hosts) { plan_.channel.hosts_store = hosts; }

  // Joins the first round (nullopt) or the one after `previous`; exactly one of the callbacks
  // runs, with the round or a one-line error; `not_needed` when the job finished while this
  // host waited for a place (a spare: RendezvousNotNeeded), which is no failure.
  void JoinRound(std::optional<RoundTransition> previous,
                 std::function<void(const RendezvousResult&)> ready,
                 std::function<void(const std::string&, bool not_needed)> failed);
  // Aborts a pending JoinRound (its `failed` runs promptly).
  void CancelJoin();

  // Opens the job channel of the joined round. `on_end` runs once with the round's end as
  // decided job-wide (the root cause), or a local kStoreLost.
  void OpenChannel(std::function<void(const RoundEnd&)> on_end);
  // Ends the round for every host with `notice` unless another notice came first. Only the
  // first call of a round publishes: later ones are ignored, so that this host never names a
  // later local event (a worker its own teardown stopped) over its first.
  void PublishEnd(RoundEnd notice);
  // Runs `fn` once this round's publication is done (the store answered, or cannot), or at once
  // when nothing is being published or the round's end is known.
  void WhenPublished(std::function<void()> fn);
  // The round's end once known.
  const std::optional<RoundEnd>& round_end() const { return round_end_; }
  // Runs `fn` when the round's end is known (at once if it is).
  void WhenEndKnown(std::function<void(const RoundEnd&)> fn);
  // Closes the round's channel (pending barrier or publication ends).
  void CloseChannel();

  // After local success: exit barrier (bounded), then departure (the store's host waits for the
  // others), then the rendezvous is closed for late hosts. `done` runs once.
  void FinishJob(std::function<void(FinishOutcome)> done);
  // The job failed for good: late hosts of a dynamic job are told so. Fire and forget.
  void CloseRendezvous(std::string reason);

  const RendezvousResult& round() const { return round_; }
  // This agent as the others see it (address known after the first round).
  RoundEnd Notice(RoundEndKind kind) const;

 private:
  void Deliver(const RoundEnd& notice);
  void SendPublication(const RoundEnd& notice);
  void PublicationDone();
  boost::asio::awaitable<FinishOutcome> Finish();

  boost::asio::io_context& io_;
  MultiHostPlan plan_;
  Say say_;
  std::shared_ptr<EtcdLink> etcd_;  // etcd backend: shared by the rendezvous and channels
  std::unique_ptr<Rendezvous> rendezvous_;
  std::unique_ptr<RoundChannel> channel_;
  RendezvousResult round_;
  std::function<void(const RoundEnd&)> on_end_;
  std::optional<RoundEnd> round_end_;
  std::optional<RoundEnd> pending_publish_;  // published once the channel is connected
  bool publishing_ = false;                  // this round's notice is pending or on its way
  std::vector<std::function<void()>> publish_waiters_;
  bool channel_ready_ = false;
  bool finishing_ = false;  // in the exit barrier: a round end interrupts it
  std::function<void(FinishOutcome)> pending_finish_;  // FinishJob before the channel was up
  std::vector<std::function<void(const RoundEnd&)>> waiters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // guards late completions
};

}  // namespace cpplaunch
