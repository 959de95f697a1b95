#pragma once
// The etcd v3 rendezvous (--rdzv-backend=etcd-v3, and etcd / etcd-v2 as the same backend): the
// join algorithm of rendezvous_state.h, as for c10d, with its state in one etcd key (etcd_keys.h)
// updated by a transaction on the key's mod_revision. Waiting agents watch that key, so they
// react to every change at once, without polling. Each agent's record is attached to its own
// kept-alive lease (etcd_link.h): a participant whose lease expired is dropped before a round
// completes, and a member that dies while the round runs ends it through the round's channel
// (etcd_job_channel.h). The coordination lives in etcd, not in any agent, so the job survives
// the loss of any host as long as MIN hosts remain.
//
// The workers' store of a round is hosted by the agent of group rank 0 on the fresh port it
// offered in its record: the result's master_addr/master_port name it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/etcd/etcd_link.h"

namespace cpplaunch {

class EtcdRendezvous : public Rendezvous {
 public:
  // `link` is shared with the rounds' channels. settings.self.addr empty: the address of the
  // interface that routes to the first etcd endpoint.
  EtcdRendezvous(const boost::asio::any_io_executor& executor, RendezvousSettings settings,
                 std::shared_ptr<EtcdLink> link);
  ~EtcdRendezvous() override;

  // As DynamicRendezvous::Next. An unreachable etcd is retried (with progress lines) until
  // join_timeout, then fails with one line naming the endpoints.
  Task<RendezvousResult> Next(std::optional<RoundTransition> previous) override;
  Task<void> Close(std::string reason) override;
  // Revokes this agent's lease: its record goes now, and its exit ends nothing.
  Task<void> Disarm() override;
  void Cancel() override;

 private:
  struct Snapshot {
    std::optional<RendezvousState> state;
    int64_t mod_revision = 0;  // the fencing token; 0: no state yet
    int64_t revision = 0;      // the store's revision when read
  };
  using Clock = std::chrono::steady_clock;

  Task<void> Connect(Clock::time_point deadline);
  Task<void> CreateNodeRecord();
  Task<void> PublishSelf();
  Task<Snapshot> Read();
  Task<bool> Write(Snapshot* snapshot, const RendezvousState& next);
  Task<bool> DropDeadParticipants(Snapshot* snapshot, const RendezvousState& next);
  Task<void> AnnounceWaiting(const RendezvousState& state);
  Task<void> RefuseMismatch(Snapshot* snapshot, const JoinDecision& decision);
  Task<void> WaitForNews(const Snapshot& snapshot, const JoinDecision& decision,
                         Clock::time_point deadline);
  Task<void> Leave(Snapshot snapshot);
  // The round's result, or nullopt when a member's record vanished since the round completed
  // (its lease expired): the round is then ended for everybody and this agent joins the next.
  Task<std::optional<RendezvousResult>> Finish(const RendezvousState& state, int rank);
  void WatchState(int64_t from_revision);
  void StopWatch();
  void ReportProgress(const RendezvousState& state, Clock::time_point deadline);
  RendezvousError Error(const std::string& what) const;

  RendezvousSettings settings_;
  std::shared_ptr<EtcdLink> link_;
  bool connected_ = false;
  std::unique_ptr<etcd::Watch> watch_;  // the state key, while Next() runs
  bool watch_ended_ = true;
  int64_t latest_change_ = 0;  // the newest state revision the watch reported
  boost::asio::steady_timer wake_;
  Clock::time_point next_progress_{};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace cpplaunch
