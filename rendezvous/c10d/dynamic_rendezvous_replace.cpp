// The hot-spare replacement of the c10d rendezvous (dynamic_rendezvous.h): after a round that lost
// a host while a spare waits, one survivor forms the next round, and the others only read their
// assignments. Every survivor joining the round anew (the queued join, its completion, the
// assignments) cost as much as a job's first rendezvous; here a survivor's part is a claim, a
// wait and a read before it arms the round.
//
// The former role is a key owned by the claiming connection: should the former die before it
// says what it decided, the key goes with it, and the next survivor whose wait ends claims it.
// What it decided is one key, set after the state and the assignments are written: a survivor
// that then finds its assignment holds the round, one that finds none joins as before.

#include <algorithm>
#include <iterator>

#include "rendezvous/c10d/dynamic_rendezvous.h"
#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/core/join_steps.h"
#include "rendezvous/core/quarantine.h"
#include "rendezvous/core/seats.h"

namespace cpplaunch {

using Clock = AsyncStoreClient::Clock;

Rendezvous::Task<std::optional<RendezvousResult>> DynamicRendezvous::JoinReplacement(
    const JoinRequest& me, Clock::time_point deadline) {
  if (me.lost_seat < 0) co_return std::nullopt;
  const int64_t round = me.min_round;
  const std::string& self = settings_.self.node_id;
  // A former that holds the role without saying anything for queue_timeout may be frozen: the
  // joins then form the round (its late write, if any, fails on the state they changed).
  const auto give_up = std::min(deadline, Clock::now() + settings_.queue_timeout);
  for (;;) {
    if (co_await client_.Claim(keys_.Former(round), self) == self) co_await FormReplacement(me);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now());
    std::vector<std::string> keys{keys_.Formed(round)};
    if (co_await client_.Wait(std::move(keys),
                              std::clamp(left, std::chrono::milliseconds(1), kAnswerWait))) {
      break;
    }
    // The former may have died before it said: its key went with its connection.
    if (Clock::now() >= give_up) co_return std::nullopt;
  }
  const std::optional<RoundAssignment> assignment = co_await ReadAssignment(round);
  if (!assignment) co_return std::nullopt;  // the joins form the round
  if (settings_.trace) settings_.trace("rendezvous: replacement round " + std::to_string(round));
  co_return co_await Finish(*assignment, deadline);
}

Rendezvous::Task<void> DynamicRendezvous::FormReplacement(const JoinRequest& me) {
  const std::string formed = keys_.Formed(me.min_round);
  std::vector<std::string> said{formed};
  if (co_await client_.Check(std::move(said))) co_return;  // a former before this one said
  const std::string& self = settings_.self.node_id;
  // Each pass either writes the round or removes a dead spare: a few at most.
  for (int pass = 0; pass < 8; ++pass) {
    Snapshot snapshot = co_await Read();
    const auto& state = snapshot.state;
    // A former that died after its write: its round stands, its assignments may not.
    if (state && state->round == me.min_round && state->complete && !state->closed &&
        GroupRankOf(*state, self) >= 0) {
      co_await PublishAssignments(*state);
      co_await WakeWaiters(state->epoch - 1, *state);
      break;
    }
    const auto next = state ? ReplacementRound(*state, me, WallMs()) : std::nullopt;
    if (!next) break;
    std::vector<std::string> others;
    std::copy_if(next->participants.begin(), next->participants.end(), std::back_inserter(others),
                 [&](const std::string& id) { return id != self; });
    const std::vector<std::string> gone = co_await GoneAmong(others);
    if (!gone.empty()) {
      // A dead spare goes silently (quarantine.h), and another may take the seat; a second
      // survivor gone is not the round's named loss: the joins decide, as without a spare.
      if (!std::all_of(gone.begin(), gone.end(),
                       [&](const std::string& id) { return IsSpare(*state, id); })) {
        break;
      }
      co_await Write(&snapshot, WithoutNodes(*state, gone));
      continue;
    }
    // The assignments before the formed key: a survivor reads its own once woken. The spares wait
    // for the state's next version.
    if (!co_await WriteRound(&snapshot, *next)) continue;
    if (settings_.trace) {
      settings_.trace("rendezvous: formed round " + std::to_string(next->round) + " with " +
                      std::to_string(next->participants.size()) + " hosts, a spare in seat " +
                      std::to_string(me.lost_seat));
    }
    break;
  }
  co_await client_.Set(formed, "");
}

}  // namespace cpplaunch
