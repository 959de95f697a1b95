#pragma once
// The steps around DecideJoin (rendezvous_state.h) that the c10d (dynamic_rendezvous.h) and etcd
// (etcd_rendezvous.h) backends share, whatever holds the state: the request a node makes, when
// a waiting node looks again, what it writes when it leaves or refuses a job whose settings
// contradict its own, and what it tells the operator and the running round. Each backend only
// reads, writes and publishes through its own medium. Pure, except WallMs(), the one clock read
// both backends share.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous/core/join_queue.h"
#include "rendezvous/core/node_info.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/core/rendezvous_state.h"

namespace cpplaunch {

// Milliseconds since the Unix epoch, wall-clock, not steady: the last-call deadline is stored in
// the shared state and compared by every host, and a steady clock's epoch is private to one
// machine. Hosts' clocks must roughly agree, as with torchrun, whose state holds datetime
// deadlines.
int64_t WallMs();

// What a host that waited for a place (a spare) throws when the job finished without it.
RendezvousNotNeeded NotNeeded(const RendezvousSettings& settings);

// The LOGLEVEL=DEBUG line for one join decision (RendezvousSettings::trace), e.g.
// "join step: write round 2 epoch 5 (3 participants, 1 waiting, last call armed)".
std::string JoinStepLine(const JoinDecision& decision);
// The same for the queued join path: the admitting host's batch ("join queue: admitted 3 of 4
// into round 0 epoch 1 (3 participants, 1 waiting)"), and a queued host's answer (nullopt: none
// came in time).
std::string AdmissionLine(const Admission& admission);
std::string JoinAnswerLine(const std::optional<JoinAnswer>& answer);

// This node's request for the first round (no `previous`) or the round after `previous`: a
// failure consumes a restart, a membership change does not.
JoinRequest JoinRequestFor(const RendezvousSettings& settings,
                           const std::optional<RoundTransition>& previous);

// The group rank whose host `end` says the round lost for good (its agent died, went silent or
// stopped), for RoundTransition::lost_group_rank; -1 when the end names no such host (a worker
// failure: the host comes back and keeps its seat).
int LostSeat(const RoundEnd& end);
// The group rank whose workers `end` says failed first (the round's root cause), for
// RoundTransition::failed_group_rank; -1 for any other end.
int FailedSeat(const RoundEnd& end);

// What a node that DecideJoin set aside (JoinAction::kQuarantined, quarantine.h) throws: one
// line naming the host, the job and why.
RendezvousError SetAsideError(const RendezvousSettings& settings, const JoinDecision& decision);

// When a waiting node looks at the state again if nothing changes: the earliest of `deadline`,
// the next progress line and the wall-clock wake-up `wake_at_ms` (0: none), given the clocks'
// readings `now` and `now_ms`.
std::chrono::steady_clock::time_point WakeTime(std::chrono::steady_clock::time_point deadline,
                                               std::chrono::steady_clock::time_point next_progress,
                                               int64_t wake_at_ms,
                                               std::chrono::steady_clock::time_point now,
                                               int64_t now_ms);

// True when writing `next` over `current` completes a round that was open: its participants must
// then be checked for life first (a dead one is removed instead, and the join decides again).
bool CompletesOpenRound(const std::optional<RendezvousState>& current, const RendezvousState& next);

// Whom a write of `next` over `current` counts on being alive, to be checked before it is made:
// the participants of a round it completes (CompletesOpenRound) and the spares a host is set
// aside for (quarantine.h: SparesToConfirm), without `self`. A dead participant is removed with
// a progress line, a dead spare (IsSpare in `next`) silently; then the join decides again.
std::vector<std::string> NodesToConfirm(const std::optional<RendezvousState>& current,
                                        const RendezvousState& next, std::string_view self);

// "host <id> left round <round> before it completed (<why>)", the progress line for a
// participant removed because it died while its round waited.
std::string LeftBeforeCompletionLine(std::string_view node_id, int64_t round, std::string_view why);

// A node that joined the wait list of the running round `state` ends that round, so the running
// hosts restart and the next round takes everybody (torchrun's membership change): the notice
// it publishes, and the progress line saying so.
RoundEnd MembershipChangeNotice(const NodeInfo& self, const RendezvousState& state);
std::string RestartAskedLine(std::string_view run_id, const RendezvousState& state);

// This node's settings contradict the round's (--nnodes, --max-restarts; decision.action is
// kMismatch): the rendezvous is closed with the reason, and when the round was already running
// its hosts are told through the round's end, so every host stops with the same message instead
// of waiting.
struct Refusal {
  std::string message;             // "<self label>: <decision.message>", what the node throws
  RendezvousState closed;          // the state to write
  std::optional<RoundEnd> notice;  // the round's config-error end, when it was running
};
Refusal RefusalOf(const NodeInfo& self, const JoinDecision& decision);

// What a node leaving after join_timeout writes: `state` without `node_id`, or nullopt when the
// node holds no place to give up (neither waiting nor a participant of an incomplete round).
std::optional<RendezvousState> LeavingState(const RendezvousState& state, std::string_view node_id);

// "after 600 s (join_timeout): 2 host(s) had joined round 0, --nnodes=3:4", the end of a join
// timeout's message; `state` is the last one read (nullopt: none stored).
std::string JoinTimeoutDetail(const std::optional<RendezvousState>& state,
                              std::chrono::steady_clock::duration waited, int min_nodes,
                              int max_nodes);

// The progress line of this node (settings.run_id, settings.self) waiting in `state` at `where`
// (waiting_line.h), `join_left` before its join deadline, at wall-clock `now_ms`. `joined`: the
// participants in all when `state` is a summary (StateSummary); -1: its list's.
std::string ProgressLine(const RendezvousState& state, const RendezvousSettings& settings,
                         std::string_view where, std::chrono::steady_clock::duration join_left,
                         int64_t now_ms, int joined = -1);

}  // namespace cpplaunch
