#pragma once
// Quarantine (issue 24): a host that keeps failing is set aside when a spare can take its place.
// Pure: rules over RendezvousState that DecideJoin and AdmitJoins apply.
//
// Spares. A host that finds every place of a round taken (reserved seats, or MAX reached) adds
// itself to state.spares once and waits; it leaves the list when it takes a place, or when its
// join ends (timeout, death: WithoutNode). The state so knows whether a spare is there.
//
// Strikes. The round after a failed one is opened by a host of the failed round, whose request
// names the group rank whose workers failed first (JoinRequest::failed_seat: the round's end, the
// job's root cause, the same on every host). The write that opens the round counts one strike
// against that seat's host (state.strikes), once per round. When its strikes reach
// quarantine_after and a spare waits, the host is set aside: it goes to state.quarantined and
// its seat is vacant, for a spare to take (seats.h). Without a spare it keeps its seat (a
// quarantine must not shrink the job) and is checked again after its next failure.
//
// Lost hosts. A host whose agent was lost (its seat vacant: the round's end named it) and whose
// seat a newcomer took is set aside when the round completes: should its agent come back (a host
// whose link was cut, then restored), it is refused instead of joining as a newcomer.
//
// A quarantined node id is refused every place for the rest of the job (JoinAction::kQuarantined,
// with QuarantineLine). A new agent on the same machine has another node id: it joins as a spare.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/core/text_record.h"

namespace cpplaunch {

bool IsSpare(const RendezvousState& state, std::string_view node_id);
bool IsQuarantined(const RendezvousState& state, std::string_view node_id);
// The rounds whose root cause `node_id`'s workers were (0 for none).
int StrikesOf(const RendezvousState& state, std::string_view node_id);

// Counts me.failed_seat's strike in `opened`, a round me opened (NewRound: its seats are the failed
// round's group order), and sets the host aside when the rules above say so. Nothing when the
// request names no failed seat or an out-of-range one.
void CountStrike(RendezvousState* opened, const JoinRequest& me);

// The spares a write of `next` over `current` relies on: when it sets a host aside (`next` has
// more quarantined hosts), next.spares, for the writer to check alive first (a spare killed
// while it waited is still listed; a quarantine on its account would leave the seat empty);
// empty otherwise.
std::vector<std::string> SparesToConfirm(const std::optional<RendezvousState>& current,
                                         const RendezvousState& next);

// Called as the open round `state` completes, with `order` the group order it gets (SeatOrder):
// the holders of vacant seats that a newcomer took are set aside.
void SetAsideReplaced(RendezvousState* state, const std::vector<std::string>& order);

// The spares list with `node_id` in it (sorted), or without it.
void AddSpare(RendezvousState* state, const std::string& node_id);
void RemoveSpare(RendezvousState* state, std::string_view node_id);

// Why `node_id` gets no place, one line for its agent to print before it exits:
// "this host is set aside for the rest of the job: its workers failed first in 2 attempts; a
// spare took its place. Replace or repair the machine; a new agent started on it joins as a
// spare".
std::string QuarantineLine(const RendezvousState& state, std::string_view node_id);

// "idA*2,idB*1": state.strikes as the state's text encodes it, and back (nullopt: malformed,
// ids unsorted or repeated, counts outside 1..kMaxCount, more than kMaxNodes entries).
std::string EncodeStrikes(const std::vector<std::pair<std::string, int>>& strikes);
std::optional<std::vector<std::pair<std::string, int>>> DecodeStrikes(std::string_view text);

// Reads the state's optional fields "strikes" and "segments" (segments.h) from `fields` into
// `state`, each at most `max_bytes` long; false with *error naming the field.
bool ReadStrikesAndSegments(const TextRecord& fields, std::size_t max_bytes, RendezvousState* state,
                            std::string* error);

}  // namespace cpplaunch
