#pragma once
// The etcd v3 rendezvous (--rdzv-backend=etcd-v3, and etcd / etcd-v2 as the same backend): the
// join algorithm of rendezvous_state.h, as for c10d, with its state in one etcd key (etcd_keys.h)
// updated by a transaction on the key's mod_revision. Each agent's record is attached to its own
// kept-alive lease (etcd_link.h): a participant whose lease expired is dropped before a round
// completes, and a member that dies while the round runs ends it through the round's channel
// (etcd_job_channel.h). The coordination lives in etcd, not in any agent, so the job survives
// the loss of any host as long as MIN hosts remain.
//
// Two join paths, one after the other, as the c10d backend's (dynamic_rendezvous.h), so that a
// job of N hosts costs etcd O(N) requests and bytes in all, not N^2:
//   - the queued join (etcd_join_queue.cpp): an agent puts its request under its own key on its
//     own lease (no contention), then tries the admitter key, created only where absent and on
//     the creator's lease. The agent holding it applies every queued request in batches
//     (AdmitJoins): one transaction per batch writes the state, its summary, each request's
//     answer and deletes the requests it applied. Whoever holds the key, not the state's last
//     writer, admits: a single holder at a time, and its lease expiring (it died or froze) frees
//     the key for the next queued agent, which looks at it while it waits for its answer.
//     The agent watches its inbox (etcd_keys.h) from its join on, not the state: one watch per
//     agent. An admitted participant hears there of its round's epoch steps (the job closed,
//     its last call armed: their writer puts the summary into each participant's inbox) and of
//     the round's completion (its assignment); the admitter completes the round at the last
//     call once for everybody;
//   - the decide-join loop (etcd_rendezvous.cpp) for whatever the queue left to decide (a
//     mismatch, a closed job, a running round to wait for, a newer round, a stuck admission):
//     DecideJoin on the whole state, which it watches.
// The write completing a round publishes every member's assignment (round_assignment.h) in the
// member's inbox (etcd_keys.h); each assignment carries the records of the few peers it names
// (itself, group rank 0, its heartbeat peers) as the publisher read them (etcd_assignment.h), so
// that a member starts its round on the watch event alone. A member whose record was gone then ends
// the round before it starts; one that goes later is seen by the round's channel, which watches the
// same records from the revision they were read at.
//
// The workers' store of a round is hosted by the agent of group rank 0 on the fresh port it
// offered in its record: the result's master_addr/master_port name it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rendezvous/core/join_queue.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/core/round_assignment.h"
#include "rendezvous/etcd/etcd_assignment.h"
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
  struct WatchedChange {
    int64_t revision = 0;
    std::optional<std::string> value;  // nullopt: deleted
  };

  // One try of Next(): throws etcd::EtcdError when etcd did not answer a request in its bound.
  // *waited: this host waited for a place (a spare, when the job then finishes), kept across
  // tries.
  Task<RendezvousResult> Join(const std::optional<RoundTransition>& previous,
                              Clock::time_point started, Clock::time_point deadline, bool* waited);
  Task<void> Connect(Clock::time_point deadline);
  // After etcd did not answer (`why`): a progress line at most every progress_interval, naming
  // `next_step` and the time left, then a short pause.
  Task<void> PauseAfter(const std::string& why, const char* next_step, Clock::time_point deadline,
                        Clock::time_point* next_line);
  void RefreshSelf();
  Task<Snapshot> Read();
  // The snapshot of the state key's `value` (nullopt: absent) at `mod_revision`, seen at store
  // revision `revision`; throws when the value is unreadable.
  Snapshot SnapshotOf(const std::optional<std::string>& value, int64_t mod_revision,
                      int64_t revision) const;
  // One transaction: `next` and its summary if the state is still the snapshot's (and the epoch
  // key when the epoch moved), with `extra` ops; refreshes *snapshot either way. A write that
  // completes a round then publishes its assignments (PublishRound).
  Task<bool> Write(Snapshot* snapshot, const RendezvousState& next,
                   const std::vector<etcd::TxnOp>* extra = nullptr);
  // Before a write completes a round, every participant must still hold its lease (its record),
  // and before one sets a host aside, every spare it counts on (quarantine.h): those that do not
  // (DeadAmong) are removed from the state first (DropDead, one write, a progress line for each
  // participant), and the join decides again.
  Task<bool> DropDeadParticipants(Snapshot* snapshot, const RendezvousState& next);
  Task<std::vector<std::string>> DeadAmong(const std::vector<std::string>& ids);
  Task<void> DropDead(Snapshot* snapshot, const std::vector<std::string>& gone);
  Task<void> AnnounceWaiting(const RendezvousState& state);
  Task<void> RefuseMismatch(Snapshot* snapshot, const JoinDecision& decision);
  // Waits for news of the state and brings *snapshot up to date with it.
  Task<void> WaitForNews(Snapshot* snapshot, const JoinDecision& decision,
                         Clock::time_point deadline);
  Task<void> Leave(Snapshot snapshot);

  // The queued join path (etcd_join_queue.cpp): the round when this agent was admitted and the
  // round completed; nullopt when the decide-join loop must take over. Publishes this agent's
  // record with its request, in one transaction; the first one is created only where no agent
  // holds its key: another agent of the job with this node id (node_id.h) would otherwise share
  // it, and both would be one participant.
  Task<std::optional<RendezvousResult>> JoinThroughQueue(const JoinRequest& me,
                                                         Clock::time_point deadline);
  // This queued join's answer and the revision it was read at (nullopt: none came before the
  // deadline, or the admission stood still for queue_timeout or a request's bound, the longer).
  // `admit`: the admitter key was free when the request was queued: try it first.
  Task<std::optional<std::pair<JoinAnswer, int64_t>>> AwaitAnswer(int64_t attempt,
                                                                  int64_t from_revision, bool admit,
                                                                  Clock::time_point deadline);
  Task<std::optional<RendezvousResult>> AwaitCompletion(const JoinAnswer& answer,
                                                        int64_t answer_revision,
                                                        Clock::time_point deadline);
  // Takes the admitter key if it is free, applies the queue until it is drained, and frees the
  // key; returns at once when another agent holds it. Returns the summary's mod_revision when
  // another agent holds the key (it moves while the admission makes progress), 0 when etcd
  // failed the admission (the key is freed for the next try), -1 otherwise.
  Task<int64_t> Admit();
  // Applies the queue until a range of it finds it empty.
  Task<void> AdmitUntilDrained();
  // Applies the queued joins `joins` (etcd records) in batches of at most kBatch.
  Task<void> AdmitQueued(Snapshot* snapshot, std::vector<etcd::KeyValue> joins);
  // Publishes every member's assignment of the complete `state`, each in the member's inbox.
  Task<void> PublishRound(const RendezvousState& state);
  // Puts the summary of `state`, an epoch step, into the inbox of each of its participants but
  // those whose answers `extra` (the same write's operations) holds: those carry it already.
  Task<void> AnnounceEpochStep(const RendezvousState& state, const std::vector<etcd::TxnOp>* extra);
  // Writes `puts` in as few transactions as etcd takes (kPutsPerTxn, about kBytesPerTxn each).
  Task<void> PutAll(std::vector<etcd::TxnOp> puts);
  // This agent's assignment in round `round`, from its inbox; nullopt when it holds none of that
  // round.
  Task<std::optional<PublishedAssignment>> ReadAssignment(int64_t round);
  // The assignment an inbox's `value` holds when it is of round `round`; throws when malformed.
  std::optional<PublishedAssignment> AssignmentOfRound(std::string_view value, int64_t round) const;
  // This agent's assignment in the complete `state`, published first when nobody did.
  Task<PublishedAssignment> AssignmentIn(const RendezvousState& state);
  // The round's result, or nullopt when a peer's record vanished since the round completed (its
  // lease expired): the round is then ended for everybody and this agent joins the next.
  Task<std::optional<RendezvousResult>> Finish(const PublishedAssignment& published);
  // Watches `key`, or the keys in [key, range_end), one watch at a time, from `from_revision`;
  // AwaitChange waits until one changed after revision `seen` (true) or `until` (false).
  void Watch(std::string key, std::string range_end, int64_t from_revision);
  // The newest change the watch reported of `key`, or null.
  const WatchedChange* ChangeOf(const std::string& key) const;
  Task<bool> AwaitChange(int64_t seen, Clock::time_point until);
  void StopWatch();
  // Sleeps on wake_ until `until`, or until a watch event or Cancel() wakes it early.
  Task<void> SleepUntil(Clock::time_point until);
  // How often a waiting agent reads the round for a progress line: progress_interval, or longer
  // in a job so large that every agent reading that often would load etcd with more than
  // kProgressReadsPerSecond reads (4,000 agents read 800 times a second every 5 s, which with
  // the keep-alives starved the admission).
  Clock::duration ProgressPace() const;
  // The interval at which max_nodes agents doing one request each load etcd with
  // kProgressReadsPerSecond requests a second (20 s at 4,000).
  Clock::duration HerdPace() const;
  // `joined`: the participants in all when `state` is a summary; -1: its list's.
  void ReportProgress(const RendezvousState& state, Clock::time_point deadline, int joined = -1);
  RendezvousError Error(const std::string& what) const;

  // A queued join waits this long for its answer before it looks at the admitter key again, or
  // a third of the lease TTL or HerdPace when longer, but never longer than the admission may
  // stand still (queue_timeout, or a request's bound when longer).
  static constexpr std::chrono::milliseconds kAnswerWait{2000};
  // A participant that finds its round complete waits this long for its assignment before it
  // hands over to the decide-join loop (which publishes them: their publisher died).
  static constexpr std::chrono::milliseconds kAssignmentWait{3000};
  // Joins per transaction: etcd refuses more than 128 operations in one (--max-txn-ops), and a
  // join costs two (its answer, its request's deletion) next to the state's three.
  static constexpr size_t kBatch = 60;
  static constexpr int kProgressReadsPerSecond = 200;
  // Puts per transaction of a write to many inboxes, and about the bytes: etcd refuses more
  // than 128 operations and 1.5 MiB in one request, once the gateway's base64 is added.
  static constexpr size_t kPutsPerTxn = 120;
  static constexpr size_t kBytesPerTxn = size_t{512} * 1024;

  RendezvousSettings settings_;
  std::shared_ptr<EtcdLink> link_;
  bool connected_ = false;
  bool record_created_ = false;         // this agent's node record exists (the node id is its own)
  std::unique_ptr<etcd::Watch> watch_;  // [watched_key_, watched_end_), while Next() runs
  std::string watched_key_;
  std::string watched_end_;
  bool watch_ended_ = true;
  int64_t latest_change_ = 0;  // the newest revision the watch reported, of any key
  std::map<std::string, WatchedChange> changes_;  // by key, since the watch started
  int64_t attempts_ = 0;  // calls of Next(): numbers this agent's queued joins
  boost::asio::steady_timer wake_;
  Clock::time_point next_progress_{};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace cpplaunch
