#include "rendezvous/core/rendezvous_state.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <memory>
#include <set>

#include "base/text.h"
#include "rendezvous/core/node_info.h"
#include "rendezvous/core/quarantine.h"
#include "rendezvous/core/record_limits.h"
#include "rendezvous/core/seats.h"
#include "rendezvous/core/segments.h"
#include "rendezvous/core/sorted_lists.h"
#include "rendezvous/core/text_record.h"

namespace cpplaunch {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    out += item;
  }
  return out;
}

// The items of a list written by Join: the comma pieces without a trailing empty one, so that
// an empty text is an empty list (and "a," reads as {"a"}, as records have always been read).
std::vector<std::string> ParseList(std::string_view text) {
  std::vector<std::string_view> pieces = Split(text, ',');
  if (pieces.back().empty()) pieces.pop_back();
  return {pieces.begin(), pieces.end()};
}

// A node-id list of a decoded state: at most `max_items` ids of 1..kMaxNodeIdBytes bytes, in
// strictly increasing order (ranks are indexes into the sorted list, and RankOf searches it).
bool ReadList(const TextRecord& fields, std::string_view key, std::size_t max_bytes,
              int64_t max_items, std::vector<std::string>* out, std::string* error) {
  std::string text;
  if (!fields.GetText(key, max_bytes, &text, error)) return false;
  std::vector<std::string> items = ParseList(text);
  const std::string field = "rendezvous state field '" + std::string(key) + "'";
  if (static_cast<int64_t>(items.size()) > max_items) {
    *error = field + " has " + std::to_string(items.size()) + " node ids, more than " +
             std::to_string(max_items);
    return false;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].empty() || items[i].size() > record_limits::kMaxNodeIdBytes) {
      *error = field + " holds an empty or overlong node id";
      return false;
    }
    if (i > 0 && !(items[i - 1] < items[i])) {
      *error = field + " is not sorted without duplicates";
      return false;
    }
  }
  *out = std::move(items);
  return true;
}

// The seats of a decoded state (seats.h): at most max_nodes distinct ids, and in a complete round
// exactly its participants; the vacant seats ascending indexes into them. Both optional.
bool ReadSeats(const TextRecord& fields, std::size_t max_bytes, RendezvousState* state,
               std::string* error) {
  std::string text;
  if (!fields.GetText("seats", max_bytes, &text, error)) return false;
  std::vector<std::string> seats = ParseList(text);
  std::vector<std::string> sorted = seats;
  std::sort(sorted.begin(), sorted.end());
  const bool distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  const bool empty_id = std::find(sorted.begin(), sorted.end(), std::string()) != sorted.end();
  if (static_cast<int64_t>(seats.size()) > state->max_nodes || !distinct || empty_id ||
      (state->complete && !seats.empty() && sorted != state->participants)) {
    *error = "rendezvous state field 'seats' is not " +
             std::string(state->complete ? "a permutation of the participants"
                                         : "a list of at most max_nodes distinct node ids");
    return false;
  }
  std::vector<std::string> vacant;
  if (!fields.GetText("vacant", max_bytes, &text, error)) return false;
  for (const std::string& item : ParseList(text)) {
    int seat = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), seat);
    if (ec != std::errc() || end != item.data() + item.size() || seat < 0 ||
        seat >= static_cast<int>(seats.size()) ||
        (!state->vacant.empty() && seat <= state->vacant.back())) {
      *error = "rendezvous state field 'vacant' is not ascending seats of 'seats'";
      return false;
    }
    state->vacant.push_back(seat);
  }
  state->seats = std::move(seats);
  return true;
}

std::string JoinInts(const std::vector<int>& items) {
  std::string out;
  for (int item : items) out += (out.empty() ? "" : ",") + std::to_string(item);
  return out;
}

// Sorts the nodes a batch admitted into the sorted participants, in O(N log N) for the batch.
void MergeJoined(std::vector<std::string>* participants, std::vector<std::string> joined) {
  std::sort(joined.begin(), joined.end());
  std::vector<std::string> merged;
  merged.reserve(participants->size() + joined.size());
  std::merge(std::make_move_iterator(participants->begin()),
             std::make_move_iterator(participants->end()), std::make_move_iterator(joined.begin()),
             std::make_move_iterator(joined.end()), std::back_inserter(merged));
  *participants = std::move(merged);
}

// The round completes: its group order is fixed (seats.h) and its participants wake up.
void FinishRound(RendezvousState* state) {
  state->complete = true;
  state->last_call_deadline_ms = 0;
  ++state->epoch;
  if (!state->seats.empty()) {
    std::vector<std::string> order = SeatOrder(*state);
    SetAsideReplaced(state, order);
    state->seats = std::move(order);
  }
  state->vacant.clear();
  state->seats_until_ms = 0;
}

void Erase(std::vector<std::string>* list, std::string_view item) {
  list->erase(std::remove(list->begin(), list->end(), item), list->end());
}

// A node that takes a place no longer waits for one, as a joiner or as a spare.
void StopWaiting(RendezvousState* state, std::string_view node_id) {
  Erase(&state->wait_list, node_id);
  RemoveSpare(state, node_id);
}

// Every write bumps the version: the driver's COMPARE_SET against the text it read then fails
// for whichever of two concurrent writers comes second, and waiters wake on version + 1.
JoinDecision Write(RendezvousState next) {
  ++next.version;
  JoinDecision decision;
  decision.action = JoinAction::kWrite;
  decision.next = std::move(next);
  return decision;
}

JoinDecision Wait(const RendezvousState& state, int64_t wake_at_ms) {
  JoinDecision decision;
  decision.action = JoinAction::kWait;
  decision.next = state;
  decision.wake_at_ms = wake_at_ms;
  return decision;
}

// Adds `me` to an incomplete round: arms the last call at MIN, completes at MAX, as torchrun's
// dynamic rendezvous gives late joiners last_call_timeout once MIN nodes are in.
JoinDecision AddParticipant(RendezvousState next, const JoinRequest& me, int64_t now_ms) {
  StopWaiting(&next, me.node_id);
  SetSegment(&next, me.node_id, me.segment);
  InsertSorted(&next.participants, me.node_id);
  // Hosts may come from different attempts; the job's restart count only grows.
  next.restart_count = std::max(next.restart_count, me.restart_count);
  const auto size = static_cast<int>(next.participants.size());
  if (size >= next.max_nodes || SeatBook(next, now_ms).Filled(size)) {
    FinishRound(&next);
  } else if (size >= next.min_nodes && next.last_call_deadline_ms == 0) {
    next.last_call_deadline_ms = now_ms + me.last_call_timeout.count();
    ++next.epoch;
  }
  return Write(std::move(next));
}

// An agent or a state without a digest (one that predates it) is not compared.
bool OfTheSameCommand(const RendezvousState& state, const JoinRequest& me) {
  return state.command_digest.empty() || me.command_digest.empty() ||
         state.command_digest == me.command_digest;
}

RendezvousState NewRound(const RendezvousState& old, const JoinRequest& me, int64_t now_ms) {
  RendezvousState next;
  next.version = old.version;
  next.epoch = old.epoch + 1;
  next.round = std::max(me.min_round, old.round + 1);
  next.restart_count = std::max(old.restart_count, me.restart_count);
  next.min_nodes = old.min_nodes;
  next.max_nodes = old.max_nodes;
  next.command_digest = old.command_digest;
  next.admitted = old.admitted;  // the join queue's lines stay applied
  next.spares = old.spares;
  next.quarantined = old.quarantined;
  next.strikes = old.strikes;
  next.segments = old.segments;
  // Returning hosts keep their group ranks (seats.h).
  next.seats = old.complete ? GroupOrder(old) : old.seats;
  if (!old.complete) next.vacant = old.vacant;
  if (!next.seats.empty()) next.seats_until_ms = now_ms + me.last_call_timeout.count();
  MarkVacant(&next, me);
  CountStrike(&next, me);
  KeepCurrentSegments(&next);
  return next;
}

// A host that finds no place waits as a spare, once known to the state (quarantine.h).
JoinDecision WaitAsSpare(const RendezvousState& state, const JoinRequest& me, int64_t wake_at_ms) {
  if (IsSpare(state, me.node_id)) return Wait(state, wake_at_ms);
  RendezvousState next = state;
  AddSpare(&next, me.node_id);
  SetSegment(&next, me.node_id, me.segment);
  return Write(std::move(next));
}

JoinDecision DecideIncomplete(const RendezvousState& state, const JoinRequest& me, int64_t now_ms) {
  if (state.RankOf(me.node_id) < 0) {
    if (static_cast<int>(state.participants.size()) < state.max_nodes &&
        SeatBook(state, now_ms).MayJoin(me.node_id, me.segment)) {
      return AddParticipant(state, me, now_ms);
    }
    // Every free seat is taken (reaching MAX completes the round): a spare for the next round,
    // unless the reservations lapse first.
    return WaitAsSpare(state, me, now_ms < state.seats_until_ms ? state.seats_until_ms : 0);
  }
  if (me.restart_count > state.restart_count) {
    RendezvousState next = state;
    next.restart_count = me.restart_count;
    return Write(std::move(next));
  }
  if (SeatBook(state, now_ms).Filled(static_cast<int>(state.participants.size()))) {
    RendezvousState next = state;  // a seat was vacated after its newcomer joined
    FinishRound(&next);
    return Write(std::move(next));
  }
  if (auto next = CompletedAtLastCall(state, now_ms)) {
    JoinDecision decision;
    decision.action = JoinAction::kWrite;
    decision.next = std::move(*next);
    return decision;
  }
  int64_t wake_at_ms = state.last_call_deadline_ms;
  if (now_ms < state.seats_until_ms && (wake_at_ms == 0 || state.seats_until_ms < wake_at_ms)) {
    wake_at_ms = state.seats_until_ms;  // the seats may fill when their reservations lapse
  }
  return Wait(state, wake_at_ms);
}

JoinDecision DecideComplete(const RendezvousState& state, const JoinRequest& me) {
  const int rank = GroupRankOf(state, me.node_id);
  if (rank >= 0) {
    JoinDecision decision;
    decision.action = JoinAction::kDone;
    decision.next = state;
    decision.rank = rank;
    return decision;
  }
  if (state.IsWaiting(me.node_id)) return Wait(state, 0);
  if (static_cast<int>(state.participants.size()) >= state.max_nodes) {
    return WaitAsSpare(state, me, 0);  // full: wait for a slot without forcing a restart
  }
  // A late node joins the wait list, not the complete round, whose ranks are already handed out;
  // the driver then announces it, which ends the running round (a membership change), and the
  // next round takes it in.
  RendezvousState next = state;
  InsertSorted(&next.wait_list, me.node_id);
  return Write(std::move(next));
}

}  // namespace

std::string RendezvousState::Encode() const {
  TextRecordBuilder out;
  out.AddInt("version", version)
      .AddInt("epoch", epoch)
      .AddInt("round", round)
      .AddInt("restart_count", restart_count)
      .AddInt("min_nodes", min_nodes)
      .AddInt("max_nodes", max_nodes)
      .Add("complete", complete ? "1" : "0")
      .Add("closed", closed ? "1" : "0")
      .AddInt("last_call_deadline_ms", last_call_deadline_ms)
      .Add("participants", Join(participants))
      .Add("wait_list", Join(wait_list))
      .Add("closed_reason", closed_reason)
      .AddInt("admitted", admitted);
  if (!command_digest.empty()) out.Add("command_digest", command_digest);
  if (!seats.empty()) out.Add("seats", Join(seats));
  if (seats_until_ms != 0) out.AddInt("seats_until_ms", seats_until_ms);
  if (!vacant.empty()) out.Add("vacant", JoinInts(vacant));
  if (!spares.empty()) out.Add("spares", Join(spares));
  if (!quarantined.empty()) out.Add("quarantined", Join(quarantined));
  if (!strikes.empty()) out.Add("strikes", EncodeStrikes(strikes));
  if (!segments.empty()) out.Add("segments", EncodeSegments(segments));
  return out.text();
}

std::optional<RendezvousState> RendezvousState::Decode(std::string_view text, std::string* error) {
  namespace limits = record_limits;
  auto fields = TextRecord::Parse(text, "rendezvous state", error);
  if (!fields) return std::nullopt;
  RendezvousState state;
  int64_t complete = 0, closed = 0;
  if (!fields->GetInt64In("version", 0, INT64_MAX, &state.version, error) ||
      !fields->GetInt64In("round", 0, limits::kMaxCount, &state.round, error) ||
      !fields->GetIntIn("restart_count", 0, limits::kMaxCount, &state.restart_count, error) ||
      !fields->GetIntIn("min_nodes", 1, limits::kMaxNodes, &state.min_nodes, error) ||
      !fields->GetIntIn("max_nodes", state.min_nodes, limits::kMaxNodes, &state.max_nodes, error) ||
      !fields->GetInt64In("complete", 0, 1, &complete, error) ||
      !fields->GetInt64In("closed", 0, 1, &closed, error) ||
      !fields->GetInt64In("last_call_deadline_ms", 0, INT64_MAX, &state.last_call_deadline_ms,
                          error) ||
      !fields->GetText("closed_reason", limits::kMaxDetailBytes, &state.closed_reason, error)) {
    return std::nullopt;
  }
  if (!fields->Text("epoch").empty() &&
      !fields->GetInt64In("epoch", 0, INT64_MAX, &state.epoch, error)) {
    return std::nullopt;
  }
  if (!fields->Text("seats_until_ms").empty() &&
      !fields->GetInt64In("seats_until_ms", 0, INT64_MAX, &state.seats_until_ms, error)) {
    return std::nullopt;
  }
  if (!fields->Text("admitted").empty() &&
      !fields->GetInt64In("admitted", 0, INT64_MAX, &state.admitted, error)) {
    return std::nullopt;
  }
  if (!fields->GetText("command_digest", limits::kMaxCommandDigestBytes, &state.command_digest,
                       error)) {
    return std::nullopt;
  }
  state.complete = complete != 0;
  state.closed = closed != 0;
  // Checked before they are split: a list longer than the job can be is refused without
  // building it.
  const std::size_t max_list_bytes =
      static_cast<std::size_t>(state.max_nodes) * (limits::kMaxNodeIdBytes + 1);
  if (!ReadList(*fields, "participants", max_list_bytes, state.max_nodes, &state.participants,
                error) ||
      !ReadList(*fields, "wait_list", max_list_bytes, limits::kMaxNodes, &state.wait_list, error) ||
      !ReadSeats(*fields, max_list_bytes, &state, error) ||
      !ReadList(*fields, "spares", max_list_bytes, limits::kMaxNodes, &state.spares, error) ||
      !ReadList(*fields, "quarantined", max_list_bytes, limits::kMaxNodes, &state.quarantined,
                error)) {
    return std::nullopt;
  }
  if (!ReadStrikesAndSegments(*fields, 2 * max_list_bytes, &state, error)) return std::nullopt;
  return state;
}

int RendezvousState::RankOf(std::string_view node_id) const {
  auto at = std::lower_bound(participants.begin(), participants.end(), node_id);
  if (at == participants.end() || *at != node_id) return -1;
  return static_cast<int>(at - participants.begin());
}

bool RendezvousState::IsWaiting(std::string_view node_id) const {
  return std::find(wait_list.begin(), wait_list.end(), node_id) != wait_list.end();
}

JoinDecision DecideJoin(const std::optional<RendezvousState>& current, const JoinRequest& me,
                        int64_t now_ms) {
  if (!current) {
    RendezvousState fresh;
    fresh.round = me.min_round;
    fresh.restart_count = me.restart_count;
    fresh.min_nodes = me.min_nodes;
    fresh.max_nodes = me.max_nodes;
    fresh.command_digest = me.command_digest;
    return AddParticipant(std::move(fresh), me, now_ms);
  }
  const RendezvousState& state = *current;
  if (state.closed) {
    JoinDecision decision;
    decision.action = JoinAction::kClosed;
    decision.next = state;
    decision.message =
        state.closed_reason.empty() ? "the job's rendezvous is closed" : state.closed_reason;
    return decision;
  }
  if (state.min_nodes != me.min_nodes || state.max_nodes != me.max_nodes) {
    JoinDecision decision;
    decision.action = JoinAction::kMismatch;
    decision.next = state;
    decision.message =
        "this host was started with --nnodes=" + NnodesText(me.min_nodes, me.max_nodes) +
        " but the job's rendezvous uses --nnodes=" + NnodesText(state.min_nodes, state.max_nodes) +
        " (set by the first host that joined)";
    return decision;
  }
  if (!OfTheSameCommand(state, me)) {
    JoinDecision decision;
    decision.action = JoinAction::kMismatch;
    decision.next = state;
    decision.message =
        "this host's workers run another script than the job's first host's: two jobs with the "
        "same --rdzv-id? give each job its own --rdzv-id";
    return decision;
  }
  if (IsQuarantined(state, me.node_id)) {
    JoinDecision decision;
    decision.action = JoinAction::kQuarantined;
    decision.next = state;
    decision.message = QuarantineLine(state, me.node_id);
    return decision;
  }
  if (state.round < me.min_round) {
    RendezvousState opened = NewRound(state, me, now_ms);
    // Set aside by its own opening write: the write records it, the next decision refuses it.
    if (IsQuarantined(opened, me.node_id)) return Write(std::move(opened));
    return AddParticipant(std::move(opened), me, now_ms);
  }
  if (!state.complete) {
    RendezvousState marked = state;
    if (!MarkVacant(&marked, me)) return DecideIncomplete(state, me, now_ms);
    JoinDecision decision = DecideIncomplete(marked, me, now_ms);
    // The vacant seat is news for the others even when this node has nothing else to write.
    return decision.action == JoinAction::kWait ? Write(std::move(marked)) : decision;
  }
  return DecideComplete(state, me);
}

std::optional<RendezvousState> CompletedAtLastCall(const RendezvousState& state, int64_t now_ms) {
  if (state.complete || state.closed || state.last_call_deadline_ms == 0 ||
      static_cast<int>(state.participants.size()) < state.min_nodes ||
      now_ms < state.last_call_deadline_ms) {
    return std::nullopt;
  }
  RendezvousState next = state;
  FinishRound(&next);
  ++next.version;
  return next;
}

Admission AdmitJoins(const std::optional<RendezvousState>& current,
                     const std::vector<JoinRequest>& requests, int64_t now_ms) {
  Admission out;
  out.admitted.assign(requests.size(), false);
  size_t first = 0;
  if (current) {
    out.next = *current;
  } else if (!requests.empty()) {
    out.next = DecideJoin(std::nullopt, requests.front(), now_ms).next;  // creates the state
    out.admitted[0] = true;
    first = 1;
  }
  RendezvousState& s = out.next;
  const int64_t epoch_before = current ? current->epoch : 0;
  // New participants are sorted in once at the end: one sorted insert per join would make a
  // batch of N joins cost N^2.
  std::vector<std::string> joined;
  std::set<std::string_view> seen;
  auto size = static_cast<int>(s.participants.size());
  // Rebuilt (linear) only when the seats change: a new round, a vacant seat marked.
  auto book = std::make_unique<SeatBook>(s, now_ms);
  bool completed_now = false;
  auto rebuild = [&] {
    book = std::make_unique<SeatBook>(s, now_ms);
    for (const auto& id : joined) book->Add(id, SegmentOf(s, id));
  };
  for (size_t i = first; i < requests.size(); ++i) {
    const JoinRequest& r = requests[i];
    if (s.closed || s.min_nodes != r.min_nodes || s.max_nodes != r.max_nodes ||
        !OfTheSameCommand(s, r)) {
      continue;  // DecideJoin refuses it, on the joiner's side
    }
    if (s.round < r.min_round) {
      // A restarted host opens the next round, as DecideJoin would; whoever joined the old one
      // in this batch must look again.
      for (size_t j = 0; j < i; ++j) out.admitted[j] = false;
      s = NewRound(s, r, now_ms);
      joined.clear();
      seen.clear();
      size = 0;
      completed_now = false;
      rebuild();
    }
    if (s.complete || IsQuarantined(s, r.node_id)) continue;  // as above, for a set-aside host
    if (MarkVacant(&s, r)) rebuild();
    if (s.RankOf(r.node_id) >= 0 || seen.count(r.node_id)) {
      out.admitted[i] = true;  // asked again (a retry): already in
      s.restart_count = std::max(s.restart_count, r.restart_count);
      continue;
    }
    if (size >= s.max_nodes || !book->MayJoin(r.node_id, r.segment)) continue;
    joined.push_back(r.node_id);
    seen.insert(r.node_id);
    SetSegment(&s, r.node_id, r.segment);
    book->Add(joined.back(), r.segment);
    out.admitted[i] = true;
    s.restart_count = std::max(s.restart_count, r.restart_count);
    ++size;
    if (size >= s.max_nodes || book->Filled(size)) {
      s.complete = true;  // FinishRound once the participants are merged, below
      completed_now = true;
      ++s.epoch;
    } else if (size >= s.min_nodes && s.last_call_deadline_ms == 0) {
      s.last_call_deadline_ms = now_ms + r.last_call_timeout.count();
      ++s.epoch;
    }
  }
  MergeJoined(&s.participants, std::move(joined));
  if (completed_now) {
    s.complete = false;
    --s.epoch;
    FinishRound(&s);
  }
  for (const auto& id : seen) StopWaiting(&s, id);
  s.version = (current ? current->version : 0) + 1;
  if (s.epoch != epoch_before) s.epoch = epoch_before + 1;
  s.admitted = (current ? current->admitted : 0) + static_cast<int64_t>(requests.size());
  return out;
}

RendezvousState WithoutNode(RendezvousState state, std::string_view node_id) {
  Erase(&state.wait_list, node_id);
  RemoveSpare(&state, node_id);
  // A complete round keeps its participants: ranks are indexes into the list, and the others'
  // ranks are handed out already.
  if (!state.complete) {
    Erase(&state.participants, node_id);
    if (static_cast<int>(state.participants.size()) < state.min_nodes &&
        state.last_call_deadline_ms != 0) {
      state.last_call_deadline_ms = 0;
      ++state.epoch;
    }
  }
  ++state.version;
  return state;
}

RendezvousState WithoutNodes(RendezvousState state, const std::vector<std::string>& gone) {
  const int64_t version = state.version;
  for (const auto& id : gone) state = WithoutNode(std::move(state), id);
  state.version = version + 1;
  return state;
}

RendezvousState ReformedWithout(const RendezvousState& state,
                                const std::vector<std::string>& gone) {
  RendezvousState next = state;
  ++next.version;
  if (!state.complete || state.closed) return next;
  const std::set<std::string_view> dropped(gone.begin(), gone.end());
  std::vector<std::string> stay;
  for (const auto& id : state.participants) {
    if (!dropped.count(id)) stay.push_back(id);
  }
  std::vector<std::string> waiting;
  for (const auto& id : state.wait_list) {
    if (dropped.count(id)) continue;
    if (static_cast<int>(stay.size()) < state.max_nodes) {
      InsertSorted(&stay, id);
    } else {
      waiting.push_back(id);
    }
  }
  next.round = state.round + 1;
  next.epoch = state.epoch + 1;
  next.participants = std::move(stay);
  next.wait_list = std::move(waiting);
  next.last_call_deadline_ms = 0;
  // Stable seats (seats.h): the others keep their group ranks; the dropped hosts' seats are
  // vacant for the waiting hosts taken in, and without enough of them the ranks close up.
  next.seats = GroupOrder(state);
  next.vacant.clear();
  for (size_t seat = 0; seat < next.seats.size(); ++seat) {
    if (dropped.count(next.seats[seat])) next.vacant.push_back(static_cast<int>(seat));
  }
  next.seats_until_ms = 0;
  next.complete = static_cast<int>(next.participants.size()) >= state.min_nodes;
  if (next.complete) {
    next.seats = SeatOrder(next);
    next.vacant.clear();
  }
  return next;
}

std::optional<RendezvousState> ReplacementRound(const RendezvousState& state, const JoinRequest& me,
                                                int64_t now_ms) {
  const std::vector<std::string> order = GroupOrder(state);
  const int seats = static_cast<int>(order.size());
  if (!state.complete || state.closed || state.round + 1 != me.min_round || me.lost_seat < 0 ||
      me.lost_seat >= seats || me.failed_seat >= 0 || !state.wait_list.empty() ||
      state.spares.empty() || state.min_nodes != me.min_nodes || state.max_nodes != me.max_nodes ||
      !OfTheSameCommand(state, me) || order[static_cast<size_t>(me.lost_seat)] == me.node_id ||
      GroupRankOf(state, me.node_id) < 0) {
    return std::nullopt;
  }
  // The round the survivors' joins would open, with every seat but the lost one taken back.
  RendezvousState next = NewRound(state, me, now_ms);
  const std::string& lost = order[static_cast<size_t>(me.lost_seat)];
  std::vector<std::string> stay;
  std::copy_if(order.begin(), order.end(), std::back_inserter(stay),
               [&](const std::string& id) { return id != lost; });
  std::sort(stay.begin(), stay.end());
  next.participants = std::move(stay);
  // The spare: one of the lost host's segment first (segments.h), else the first by node id.
  const std::string_view segment = SegmentOf(state, lost);
  auto spare = std::find_if(state.spares.begin(), state.spares.end(), [&](const std::string& id) {
    return !segment.empty() && SegmentOf(state, id) == segment;
  });
  if (spare == state.spares.end()) spare = state.spares.begin();
  StopWaiting(&next, *spare);
  InsertSorted(&next.participants, *spare);
  if (!SeatBook(next, now_ms).Filled(static_cast<int>(next.participants.size()))) {
    return std::nullopt;
  }
  FinishRound(&next);
  next.version = state.version + 1;
  next.epoch = state.epoch + 1;
  return next;
}

RendezvousState Closed(RendezvousState state, std::string reason) {
  state.closed = true;
  state.closed_reason = std::move(reason);
  ++state.version;
  ++state.epoch;
  return state;
}

bool MembershipChangePending(const RendezvousState& state, int64_t round) {
  return state.round > round || (state.round == round && !state.wait_list.empty());
}

}  // namespace cpplaunch
