#pragma once
// The write turn of the c10d rendezvous (dynamic_rendezvous.h): hosts about to COMPARE_SET the
// state key take a ticket and write one after the other.
//
// Hosts that arrive together would all COMPARE_SET the one state key at once: each success
// fails every other write in flight, and each failure carries the whole state back, so N
// arrivals cost O(N^2) writes (O(N^3) bytes). A host that is about to write first takes a ticket
// and waits until the previous ticket's holder has written, so the writes come one after the
// other and nearly all succeed. The turn only orders writes; COMPARE_SET still decides them.
// A holder that died (or is stuck) never passes its turn: a count of passed turns shows whether
// the queue moves, and when it has not moved for kTurnWait the next host in line writes anyway
// (the host behind that one after twice as long, and so on), so that waiting hosts do not all
// rush the key at once.
//
// Threads: on the client's loop thread; one call at a time. The client and the keys must
// outlive the turn's calls.

#include <chrono>
#include <cstdint>

#include "base/asio_coroutine.h"
#include "rendezvous/c10d/dynamic_keys.h"
#include "rendezvous/store/client/async_store_client.h"

namespace cpplaunch {

class WriteTurn {
 public:
  using Clock = AsyncStoreClient::Clock;
  // A ticket: no turn taken yet, or the turn was passed on.
  static constexpr int64_t kNoTurn = 0;
  static constexpr int64_t kTurnPassed = -1;
  static constexpr std::chrono::milliseconds kTurnWait{1000};

  WriteTurn(AsyncStoreClient& client, const DynamicKeys& keys) : client_(client), keys_(keys) {}

  // Takes a ticket and returns it once its predecessor wrote (or once the queue stood still for
  // kTurnWait per place in it, or at `deadline`).
  boost::asio::awaitable<int64_t> Take(Clock::time_point deadline);
  // Lets the next ticket's holder write; returns kTurnPassed.
  boost::asio::awaitable<int64_t> Pass(int64_t ticket);

 private:
  AsyncStoreClient& client_;
  const DynamicKeys& keys_;
};

}  // namespace cpplaunch
