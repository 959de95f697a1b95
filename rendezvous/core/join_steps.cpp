#include "rendezvous/core/join_steps.h"

#include <algorithm>
#include <array>

#include "base/text.h"
#include "rendezvous/core/quarantine.h"
#include "rendezvous/core/waiting_line.h"

namespace cpplaunch {

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

JoinRequest JoinRequestFor(const RendezvousSettings& settings,
                           const std::optional<RoundTransition>& previous) {
  JoinRequest me;
  me.node_id = settings.self.node_id;
  me.min_nodes = settings.min_nodes;
  me.max_nodes = settings.max_nodes;
  me.command_digest = settings.command_digest;
  me.last_call_timeout = settings.last_call_timeout;
  me.min_round = previous ? previous->round + 1 : 0;
  me.restart_count = previous ? previous->restart_count + (previous->failure ? 1 : 0) : 0;
  me.lost_seat = previous ? previous->lost_group_rank : -1;
  me.failed_seat = previous ? previous->failed_group_rank : -1;
  me.quarantine_after = settings.quarantine_after;
  me.segment = settings.segment;
  return me;
}

int LostSeat(const RoundEnd& end) {
  const bool gone = end.kind == RoundEndKind::kPeerLost || end.kind == RoundEndKind::kAgentStopped;
  return gone ? end.node_rank : -1;
}

int FailedSeat(const RoundEnd& end) {
  return end.kind == RoundEndKind::kWorkerFailure ? end.node_rank : -1;
}

RendezvousError SetAsideError(const RendezvousSettings& settings, const JoinDecision& decision) {
  return RendezvousError(settings.self.Label() + " gets no place in job '" + settings.run_id +
                         "': " + decision.message);
}

std::chrono::steady_clock::time_point WakeTime(std::chrono::steady_clock::time_point deadline,
                                               std::chrono::steady_clock::time_point next_progress,
                                               int64_t wake_at_ms,
                                               std::chrono::steady_clock::time_point now,
                                               int64_t now_ms) {
  auto until = std::min(deadline, next_progress);
  if (wake_at_ms != 0)
    until = std::min(until, now + std::chrono::milliseconds(wake_at_ms - now_ms));
  return until;
}

bool CompletesOpenRound(const std::optional<RendezvousState>& current,
                        const RendezvousState& next) {
  return next.complete && current && !current->complete;
}

std::vector<std::string> NodesToConfirm(const std::optional<RendezvousState>& current,
                                        const RendezvousState& next, std::string_view self) {
  std::vector<std::string> nodes = SparesToConfirm(current, next);
  if (CompletesOpenRound(current, next)) {
    nodes.insert(nodes.end(), next.participants.begin(), next.participants.end());
  }
  std::erase(nodes, self);
  return nodes;
}

std::string LeftBeforeCompletionLine(std::string_view node_id, int64_t round,
                                     std::string_view why) {
  return "host " + std::string(node_id) + " left round " + std::to_string(round) +
         " before it completed (" + std::string(why) + ")";
}

RoundEnd MembershipChangeNotice(const NodeInfo& self, const RendezvousState& state) {
  RoundEnd notice;
  notice.kind = RoundEndKind::kMembershipChange;
  notice.host = self.hostname;
  notice.addr = self.addr;
  notice.detail = "round " + std::to_string(state.round) + " has " +
                  std::to_string(state.participants.size()) + " of at most " +
                  std::to_string(state.max_nodes) + " hosts";
  return notice;
}

std::string RestartAskedLine(std::string_view run_id, const RendezvousState& state) {
  return "job '" + std::string(run_id) + "' is running with " +
         std::to_string(state.participants.size()) +
         " host(s); asked it to restart so that this host can join";
}

Refusal RefusalOf(const NodeInfo& self, const JoinDecision& decision) {
  Refusal refusal;
  refusal.message = self.Label() + ": " + decision.message;
  refusal.closed = Closed(decision.next, refusal.message);
  if (decision.next.complete) {
    RoundEnd notice;
    notice.kind = RoundEndKind::kConfigError;
    notice.host = self.hostname;
    notice.addr = self.addr;
    notice.detail = refusal.message;
    refusal.notice = std::move(notice);
  }
  return refusal;
}

std::optional<RendezvousState> LeavingState(const RendezvousState& state,
                                            std::string_view node_id) {
  const bool listed = state.IsWaiting(node_id) || (!state.complete && state.RankOf(node_id) >= 0);
  if (!listed) return std::nullopt;
  return WithoutNode(state, node_id);
}

std::string JoinTimeoutDetail(const std::optional<RendezvousState>& state,
                              std::chrono::steady_clock::duration waited, int min_nodes,
                              int max_nodes) {
  const std::string joined = state ? std::to_string(state->participants.size()) +
                                         " host(s) had joined round " + std::to_string(state->round)
                                   : "no host had joined";
  return "after " + FormatSeconds(waited) + " (join_timeout): " + joined +
         ", --nnodes=" + NnodesText(min_nodes, max_nodes);
}

std::string ProgressLine(const RendezvousState& state, const RendezvousSettings& settings,
                         std::string_view where, std::chrono::steady_clock::duration join_left,
                         int64_t now_ms, int joined) {
  const WaitingView view{
      settings.run_id, settings.self.node_id,
      where,           std::chrono::milliseconds(state.last_call_deadline_ms - now_ms),
      join_left,       joined};
  return WaitingLine(state, view);
}

RendezvousNotNeeded NotNeeded(const RendezvousSettings& settings) {
  return RendezvousNotNeeded("job '" + settings.run_id + "' finished without needing " +
                             settings.self.Label() + ", which waited as a spare; exiting");
}

namespace {

// " round 2 epoch 5 (3 participants, 1 waiting, last call armed)"
std::string StateCounts(const RendezvousState& state) {
  std::string line = " round " + std::to_string(state.round) + " epoch " +
                     std::to_string(state.epoch) + " (" +
                     std::to_string(state.participants.size()) + " participants, " +
                     std::to_string(state.wait_list.size()) + " waiting";
  if (state.complete) line += ", complete";
  if (state.closed) line += ", closed";
  if (!state.complete && state.last_call_deadline_ms != 0) line += ", last call armed";
  return line + ")";
}

}  // namespace

std::string JoinStepLine(const JoinDecision& decision) {
  static constexpr std::array<const char*, 6> kActions{"write",  "wait",     "done",
                                                       "closed", "mismatch", "set aside"};
  std::string line = std::string("join step: ") +
                     kActions.at(static_cast<size_t>(decision.action)) + StateCounts(decision.next);
  if (decision.action == JoinAction::kDone) line += ": group rank " + std::to_string(decision.rank);
  if (!decision.message.empty()) line += ": " + decision.message;
  return line;
}

std::string AdmissionLine(const Admission& admission) {
  const auto admitted = std::count(admission.admitted.begin(), admission.admitted.end(), true);
  return "join queue: admitted " + std::to_string(admitted) + " of " +
         std::to_string(admission.admitted.size()) + " into" + StateCounts(admission.next);
}

std::string JoinAnswerLine(const std::optional<JoinAnswer>& answer) {
  if (!answer) return "join queue: no answer in time; deciding from the state";
  if (!answer->admitted) return "join queue: not admitted; deciding from the state";
  return "join queue: admitted to round " + std::to_string(answer->round) + ", waiting for epoch " +
         std::to_string(answer->epoch + 1);
}

}  // namespace cpplaunch
