#include "rendezvous/rendezvous_state.h"

#include <algorithm>
#include <charconv>

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

std::vector<std::string> Split(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    size_t comma = text.find(',');
    items.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

bool ParseInt(std::string_view text, int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

void InsertSorted(std::vector<std::string>* list, const std::string& item) {
  auto at = std::lower_bound(list->begin(), list->end(), item);
  if (at == list->end() || *at != item) list->insert(at, item);
}

void Erase(std::vector<std::string>* list, std::string_view item) {
  list->erase(std::remove(list->begin(), list->end(), item), list->end());
}

std::string NnodesText(int min_nodes, int max_nodes) {
  if (min_nodes == max_nodes) return std::to_string(min_nodes);
  return std::to_string(min_nodes) + ":" + std::to_string(max_nodes);
}

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

// Adds `me` to an incomplete round: arms the last call at MIN, completes at MAX.
JoinDecision AddParticipant(RendezvousState next, const JoinRequest& me, int64_t now_ms) {
  Erase(&next.wait_list, me.node_id);
  InsertSorted(&next.participants, me.node_id);
  next.restart_count = std::max(next.restart_count, me.restart_count);
  const auto size = static_cast<int>(next.participants.size());
  if (size >= next.max_nodes) {
    next.complete = true;
    next.last_call_deadline_ms = 0;
  } else if (size >= next.min_nodes && next.last_call_deadline_ms == 0) {
    next.last_call_deadline_ms = now_ms + me.last_call_timeout.count();
  }
  return Write(std::move(next));
}

RendezvousState NewRound(const RendezvousState& old, const JoinRequest& me) {
  RendezvousState next;
  next.version = old.version;
  next.round = std::max(me.min_round, old.round + 1);
  next.restart_count = std::max(old.restart_count, me.restart_count);
  next.min_nodes = old.min_nodes;
  next.max_nodes = old.max_nodes;
  return next;
}

JoinDecision DecideIncomplete(const RendezvousState& state, const JoinRequest& me,
                              int64_t now_ms) {
  if (state.RankOf(me.node_id) < 0) {
    if (static_cast<int>(state.participants.size()) < state.max_nodes) {
      return AddParticipant(state, me, now_ms);
    }
    return Wait(state, 0);  // cannot happen: reaching MAX completes the round
  }
  if (me.restart_count > state.restart_count) {
    RendezvousState next = state;
    next.restart_count = me.restart_count;
    return Write(std::move(next));
  }
  const bool armed = state.last_call_deadline_ms != 0;
  if (armed && static_cast<int>(state.participants.size()) >= state.min_nodes &&
      now_ms >= state.last_call_deadline_ms) {
    RendezvousState next = state;
    next.complete = true;
    next.last_call_deadline_ms = 0;
    return Write(std::move(next));
  }
  return Wait(state, armed ? state.last_call_deadline_ms : 0);
}

JoinDecision DecideComplete(const RendezvousState& state, const JoinRequest& me) {
  int rank = state.RankOf(me.node_id);
  if (rank >= 0) {
    JoinDecision decision;
    decision.action = JoinAction::kDone;
    decision.next = state;
    decision.rank = rank;
    return decision;
  }
  if (state.IsWaiting(me.node_id)) return Wait(state, 0);
  if (static_cast<int>(state.participants.size()) >= state.max_nodes) {
    return Wait(state, 0);  // full: wait for a slot without forcing a restart
  }
  RendezvousState next = state;
  InsertSorted(&next.wait_list, me.node_id);
  return Write(std::move(next));
}

}  // namespace

std::string RendezvousState::Encode() const {
  std::string out;
  auto line = [&out](const char* key, const std::string& value) {
    out += key;
    out += '=';
    out += value;
    out += '\n';
  };
  std::string reason = closed_reason;
  std::replace(reason.begin(), reason.end(), '\n', ' ');
  line("version", std::to_string(version));
  line("round", std::to_string(round));
  line("restart_count", std::to_string(restart_count));
  line("min_nodes", std::to_string(min_nodes));
  line("max_nodes", std::to_string(max_nodes));
  line("complete", complete ? "1" : "0");
  line("closed", closed ? "1" : "0");
  line("last_call_deadline_ms", std::to_string(last_call_deadline_ms));
  line("participants", Join(participants));
  line("wait_list", Join(wait_list));
  line("closed_reason", reason);
  return out;
}

std::optional<RendezvousState> RendezvousState::Decode(std::string_view text,
                                                       std::string* error) {
  RendezvousState state;
  int seen = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      *error = "rendezvous state line without '=': " + std::string(line.substr(0, 40));
      return std::nullopt;
    }
    std::string_view key = line.substr(0, equals);
    std::string_view value = line.substr(equals + 1);
    int64_t number = 0;
    auto integer = [&](int64_t* target) {
      if (!ParseInt(value, &number)) return false;
      *target = number;
      ++seen;
      return true;
    };
    int64_t tmp = 0;
    bool ok = true;
    if (key == "version") {
      ok = integer(&state.version);
    } else if (key == "round") {
      ok = integer(&state.round);
    } else if (key == "restart_count") {
      ok = integer(&tmp) && (state.restart_count = static_cast<int>(tmp), true);
    } else if (key == "min_nodes") {
      ok = integer(&tmp) && (state.min_nodes = static_cast<int>(tmp), true);
    } else if (key == "max_nodes") {
      ok = integer(&tmp) && (state.max_nodes = static_cast<int>(tmp), true);
    } else if (key == "complete") {
      ok = integer(&tmp) && (state.complete = tmp != 0, true);
    } else if (key == "closed") {
      ok = integer(&tmp) && (state.closed = tmp != 0, true);
    } else if (key == "last_call_deadline_ms") {
      ok = integer(&state.last_call_deadline_ms);
    } else if (key == "participants") {
      state.participants = Split(value);
    } else if (key == "wait_list") {
      state.wait_list = Split(value);
    } else if (key == "closed_reason") {
      state.closed_reason = std::string(value);
    }
    if (!ok) {
      *error = "rendezvous state field '" + std::string(key) + "' is not an integer";
      return std::nullopt;
    }
  }
  if (seen != 8) {
    *error = "rendezvous state is missing fields";
    return std::nullopt;
  }
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
    return AddParticipant(std::move(fresh), me, now_ms);
  }
  const RendezvousState& state = *current;
  if (state.closed) {
    JoinDecision decision;
    decision.action = JoinAction::kClosed;
    decision.next = state;
    decision.message = state.closed_reason.empty() ? "the job's rendezvous is closed"
                                                   : state.closed_reason;
    return decision;
  }
  if (state.min_nodes != me.min_nodes || state.max_nodes != me.max_nodes) {
    JoinDecision decision;
    decision.action = JoinAction::kMismatch;
    decision.next = state;
    decision.message = "this host was started with --nnodes=" +
                       NnodesText(me.min_nodes, me.max_nodes) +
                       " but the job's rendezvous uses --nnodes=" +
                       NnodesText(state.min_nodes, state.max_nodes) +
                       " (set by the first host that joined)";
    return decision;
  }
  if (state.round < me.min_round) return AddParticipant(NewRound(state, me), me, now_ms);
  if (!state.complete) return DecideIncomplete(state, me, now_ms);
  return DecideComplete(state, me);
}

RendezvousState WithoutNode(RendezvousState state, std::string_view node_id) {
  Erase(&state.wait_list, node_id);
  if (!state.complete) {
    Erase(&state.participants, node_id);
    if (static_cast<int>(state.participants.size()) < state.min_nodes) {
      state.last_call_deadline_ms = 0;
    }
  }
  ++state.version;
  return state;
}

RendezvousState Closed(RendezvousState state, std::string reason) {
  state.closed = true;
  state.closed_reason = std::move(reason);
  ++state.version;
  return state;
}

bool MembershipChangePending(const RendezvousState& state, int64_t round) {
  return state.round > round || (state.round == round && !state.wait_list.empty());
}

}  // namespace cpplaunch
