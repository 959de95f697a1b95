#pragma once
// The dynamic (c10d-like) rendezvous as a pure state machine: no I/O, no clock, no store.
//
// The whole state of one job's rendezvous lives in one store value, updated by COMPARE_SET with
// the previous value as the fencing token (as torchrun's c10d backend does with its pickled
// state). Every agent runs the same loop: read the state, call DecideJoin(), and either write the
// proposed state (retrying on a lost race), wait for the state to change, or finish.
//
// Semantics follow torchrun's join algorithm (torchrun-reference.md §7):
//   - a round that is not complete takes participants until MAX; reaching MIN arms the last-call
//     deadline (last_call_timeout); reaching MAX completes the round at once; a participant that
//     sees the deadline passed with >= MIN participants completes it;
//   - a node that finds the round complete without it joins the wait list (when the round is not
//     full), which tells the running participants to restart for a new round;
//   - ranks are the positions of the node ids in sorted order in a job's first round; later
//     rounds keep every returning host's group rank and give lost hosts' ranks to newcomers
//     (seats.h);
//   - a closed rendezvous (job finished or failed for good) admits nobody.
// Differences, by design: rounds are opened explicitly (a node restarting after round r asks for
// a round >= r + 1, so a dead participant cannot hold the next round back), and the restart count
// of the job lives in the state so every host exports the same TORCHELASTIC_RESTART_COUNT.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cpplaunch {

struct RendezvousState {
  int64_t version = 0;  // bumped by every write; waiters wait for version + 1
  // Bumped by the writes a participant of an incomplete round must see: the round completes, is
  // closed or replaced by a newer one, or its last-call deadline is armed or disarmed. Such a
  // participant waits for epoch + 1 instead of version + 1, so that N joins wake it once, not N
  // times. Optional on the wire (0 when absent).
  int64_t epoch = 0;
  int64_t round = 0;
  int restart_count = 0;  // failure-triggered restarts so far (job-wide)
  int min_nodes = 0;      // recorded by the first node, checked against every later node
  int max_nodes = 0;
  bool complete = false;
  bool closed = false;
  int64_t last_call_deadline_ms = 0;      // wall-clock ms since the epoch; 0 = not armed
  std::vector<std::string> participants;  // node ids, sorted (group order: seats.h)
  std::vector<std::string> wait_list;     // node ids, sorted
  std::string closed_reason;              // one line; set with closed
  // Lines of the join queue (join_queue.h) applied so far by AdmitJoins. Optional on the wire
  // (0 when absent).
  int64_t admitted = 0;
  // The worker command's digest, recorded by the first node and checked against every later
  // node's, as min_nodes is: two jobs that share a --rdzv-id must not train together. Optional
  // on the wire ("" when absent: not compared).
  std::string command_digest;
  // Node ids by group rank (seats.h): while the round is open, the previous complete round's;
  // once it is complete, its own (a permutation of the participants). Empty in a job's first
  // round (ranks are then the sorted positions). Optional on the wire.
  std::vector<std::string> seats;
  // Open round: the seats (indexes into `seats`, ascending) whose host was lost, for newcomers to
  // take. Optional on the wire.
  std::vector<int> vacant;
  // Open round with seats: when the seats' reservations lapse (wall-clock ms, seats.h). Optional
  // on the wire (0 when absent: they never do).
  int64_t seats_until_ms = 0;
  // Quarantine (quarantine.h), each optional on the wire: the hosts waiting for a place (sorted),
  // the hosts set aside for the rest of the job (sorted), and how many failed rounds each host
  // was the root cause of (sorted by node id).
  std::vector<std::string> spares;
  std::vector<std::string> quarantined;
  std::vector<std::pair<std::string, int>> strikes;
  // The segment each participant and spare named (segments.h), sorted by node id. Optional on
  // the wire.
  std::vector<std::pair<std::string, std::string>> segments;

  // A line-oriented text encoding ("key=value" lines). Node ids must not contain ',' or '\n'.
  std::string Encode() const;
  // Returns nullopt and fills *error when `text` is not an encoded state, or one outside the
  // bounds of record_limits.h: a negative version, round or restart count, min_nodes outside
  // 1..2^20, max_nodes below it or above 2^20, flags other than 0 and 1, more participants than
  // max_nodes, lists with empty, overlong, unsorted or duplicate ids.
  static std::optional<RendezvousState> Decode(std::string_view text, std::string* error);

  // The position in the sorted participants, -1 when not a participant. The group rank only
  // when the round has no seats: GroupRankOf (seats.h) gives it in every case.
  int RankOf(std::string_view node_id) const;
  bool IsWaiting(std::string_view node_id) const;
  friend bool operator==(const RendezvousState&, const RendezvousState&) = default;
};

struct JoinRequest {
  std::string node_id;
  int min_nodes = 1;
  int max_nodes = 1;
  std::chrono::milliseconds last_call_timeout{30000};
  // Join only a round >= min_round: 0 for the first join, previous round + 1 after a restart.
  int64_t min_round = 0;
  // Restart count this node asks for when it opens or joins a new round (previous count + 1
  // after a failure, the same count after a membership change). The highest request wins.
  int restart_count = 0;
  // The digest of the command this node's workers run ("" = not compared).
  std::string command_digest;
  // The group rank whose host the previous round lost (its end named it), -1 for none: the seat
  // is marked vacant in the round asked for (seats.h).
  int lost_seat = -1;
  // The group rank whose workers failed first in the previous round (its end named it: the
  // job's root cause), -1 for none: the round this node opens counts it (quarantine.h).
  int failed_seat = -1;
  // Set a host aside once it was the root cause of this many failed rounds and a spare can take
  // its place (--rdzv-conf quarantine_after); 0: never.
  int quarantine_after = 2;
  // The part of the cluster this node sits in (segments.h), "" for none: a lost host's seat goes
  // to a spare of its segment first.
  std::string segment;
};

enum class JoinAction {
  kWrite,        // COMPARE_SET `next` over the state that was read, then decide again
  kWait,         // wait until the state changes, or until wake_at_ms if that is set
  kDone,         // the round is complete with this node at `rank`
  kClosed,       // the rendezvous was closed: `message` says why
  kMismatch,     // this node's MIN:MAX differs from the job's: `message` says how
  kQuarantined,  // this node is set aside for the rest of the job: `message` says why
};

struct JoinDecision {
  JoinAction action = JoinAction::kWait;
  RendezvousState next;    // kWrite: the proposed state; kDone/kWait: the state read
  int64_t wake_at_ms = 0;  // kWait: re-decide at this wall-clock time (0 = only on a change)
  int rank = -1;           // kDone: the group rank
  std::string message;     // kClosed, kMismatch
};

// One step of the join algorithm. `current` is nullopt when no state was stored yet.
JoinDecision DecideJoin(const std::optional<RendezvousState>& current, const JoinRequest& me,
                        int64_t now_ms);

// Joins applied in one write by the host holding the admission role (dynamic_rendezvous.h), in
// queue order. Only plain joins are applied: a node joining the open, incomplete round it asks for
// (round >= its min_round) with the job's --nnodes, while the round has room; reaching MIN arms
// the last call and MAX completes the round, as DecideJoin would. Every other request (a closed
// job, a mismatch, a complete or full round, a newer round to open) is left out: its node decides
// for itself through DecideJoin.
struct Admission {
  RendezvousState next;        // one version step after the current state, at most one epoch step
  std::vector<bool> admitted;  // per request: its node is a participant of next.round
};
// `current` nullopt: no state yet (the first request creates it). Linear in the state's size
// plus the requests'. next.admitted is current's + requests.size().
Admission AdmitJoins(const std::optional<RendezvousState>& current,
                     const std::vector<JoinRequest>& requests, int64_t now_ms);

// What a waiting participant reads after an epoch change, or for a progress line, instead of the
// whole state: the state with at most kSummaryIds participants and waiters (as progress lines
// show them) and the number of participants.
struct StateSummary {
  static constexpr size_t kSummaryIds = 8;
  RendezvousState state;  // its lists cut to kSummaryIds ids
  int joined = 0;         // participants in all
};
std::string EncodeSummary(const RendezvousState& state);
std::optional<StateSummary> DecodeSummary(std::string_view text, std::string* error);

// The state with the open round completed because its last call expired (armed, at least MIN
// participants, now_ms past the deadline); nullopt when that is not the case. Version and epoch
// are bumped. What DecideJoin does for a waiting participant, for the admitting host to do once
// for all of them.
std::optional<RendezvousState> CompletedAtLastCall(const RendezvousState& state, int64_t now_ms);

// The state with `node_id` removed from the participants and the wait list of an incomplete
// round (a node giving up after join_timeout, or a dead node found by its missing heartbeats).
// Disarms the last-call deadline when fewer than MIN participants remain. Version is bumped.
RendezvousState WithoutNode(RendezvousState state, std::string_view node_id);

// The state with every node of `gone` removed as WithoutNode does, in one version step: waiters
// wait for version + 1, however many were removed.
RendezvousState WithoutNodes(RendezvousState state, const std::vector<std::string>& gone);

// The complete round `state.round` formed again without `gone`, members that died or went silent
// before its workers started (the round never armed), as round + 1 in one version and one epoch
// step: the other participants stay (their order, hence their ranks relative to each other),
// waiters are taken in up to MAX, the restart count stays (nothing failed). Complete at once when
// at least MIN remain (every one of them was there: no last call), else open for more hosts.
// `state` unchanged but for the version when it is not a complete, open round.
RendezvousState ReformedWithout(const RendezvousState& state, const std::vector<std::string>& gone);

// Hot spares (seats.h): the round after the complete round `state`, formed at once by the one
// host that handles the loss of me.lost_seat's host, so that no survivor joins again. Every
// other seat's host keeps its seat, a waiting spare takes the lost one (one of the lost host's
// segment first, segments.h; else the first by node id) and the lost host is set aside, as
// NewRound and the survivors' and that spare's joins would leave it, complete, in one version
// and one epoch step; the restart count is me's when that is higher. Nullopt when this is not
// that case: `state` is not the complete open round before me.min_round, `me` is not one of its
// hosts or names no lost seat (or a failed one), a host waits to join, no spare waits, `me`'s
// --nnodes or command differ. The writer checks the participants alive first (a second host
// lost at once is not named: the joins then decide).
std::optional<RendezvousState> ReplacementRound(const RendezvousState& state, const JoinRequest& me,
                                                int64_t now_ms);

// The state closed for good with `reason` (job succeeded or failed). Version is bumped.
RendezvousState Closed(RendezvousState state, std::string reason);

// True when a participant of the complete round `round` must restart its workers for a new
// round: a newer round was opened, or nodes wait to join.
bool MembershipChangePending(const RendezvousState& state, int64_t round);

}  // namespace cpplaunch
