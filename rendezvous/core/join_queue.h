#pragma once
// The dynamic rendezvous' join queue: one store value that arriving hosts APPEND their join
// request to, one line each, and that the host holding the admission role applies in batches
// (AdmitJoins, rendezvous_state.h). A host then costs the store one small append and one small
// answer instead of a read and a COMPARE_SET of the whole state (O(N) bytes each), and N hosts
// arriving together cost a few writes of the state instead of N. Pure.
//
// A line is
// "<node_id>,<attempt>,<min_nodes>,<max_nodes>,<last_call_ms>,<min_round>,<restart_count>\n", with
// ",<lost_seat>" before the '\n' when the request names one (JoinRequest::lost_seat), and
// ",<lost_seat>,<command_digest>" (-1: no lost seat) when it has a digest (an agent that predates
// either writes seven fields), and
// ",<lost_seat>,<command_digest>,<failed_seat>,<quarantine_after>,<segment>" (the digest and the
// segment maybe empty) when it names a failed seat or a segment (JoinRequest). Node ids hold
// no ',' or '\n' (NodeInfo::Decode), digests are hex.
// `attempt` numbers one agent's joins (its calls of Next()), so that its answer key is new for
// each.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/core/rendezvous_state.h"

namespace cpplaunch {

struct QueuedJoin {
  JoinRequest request;
  int64_t attempt = 0;
  friend bool operator==(const QueuedJoin& a, const QueuedJoin& b) {
    return a.attempt == b.attempt && a.request.node_id == b.request.node_id &&
           a.request.min_nodes == b.request.min_nodes &&
           a.request.max_nodes == b.request.max_nodes &&
           a.request.last_call_timeout == b.request.last_call_timeout &&
           a.request.min_round == b.request.min_round &&
           a.request.restart_count == b.request.restart_count &&
           a.request.command_digest == b.request.command_digest &&
           a.request.lost_seat == b.request.lost_seat &&
           a.request.failed_seat == b.request.failed_seat &&
           a.request.quarantine_after == b.request.quarantine_after &&
           a.request.segment == b.request.segment;
  }
};

std::string EncodeJoinLine(const QueuedJoin& join);

// The requests of `queue` after its first `skip` lines. Nullopt with *error when a line is not
// one EncodeJoinLine writes (fields missing or out of record_limits.h's bounds); a last line
// without its '\n' is not complete yet and is left out.
std::optional<std::vector<QueuedJoin>> ParseJoinQueue(std::string_view queue, int64_t skip,
                                                      std::string* error);

// What the admitting host answers each request: "participant <round> <epoch before the write>
// <last-call deadline ms>", or "decide" (DecideJoin's loop). Round trip through ParseJoinAnswer.
struct JoinAnswer {
  bool admitted = false;
  int64_t round = 0;
  int64_t epoch = 0;  // the participant waits for epoch + 1
  int64_t last_call_deadline_ms = 0;
  friend bool operator==(const JoinAnswer&, const JoinAnswer&) = default;
};
std::string EncodeJoinAnswer(const JoinAnswer& answer);
std::optional<JoinAnswer> ParseJoinAnswer(std::string_view text);

}  // namespace cpplaunch
