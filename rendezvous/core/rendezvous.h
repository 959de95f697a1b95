#pragma once
// The agents' rendezvous: every agent of a job calls Next() on the loop thread and gets the same
// round (members, ranks, restart count). Three implementations: StaticRendezvous (--node-rank
// given, fixed --nnodes) and DynamicRendezvous (c10d-like, --nnodes=MIN:MAX) talk to the job's
// store through an AsyncStoreClient; EtcdRendezvous (etcd_rendezvous.h) runs the dynamic join
// through etcd. None blocks the io_context. The fault handling below is the store backends';
// the etcd backend's is in etcd_rendezvous.h and etcd_job_channel.h. Backends' headers state
// what they add to the contract below, not the contract again.
//
// Threads: every call on the executor's thread; one call of Next() or Close() at a time.
//
// Faults (issue 15). Every client is an agent connection (settings.secret), so the agents' keys are
// out of reach of PyTorch clients. Each agent holds a liveness key owned by its rendezvous
// connection (Claim: the store deletes it the moment that connection closes), and once a round is
// about to complete each member arms it (ArmRound, store_steps.h): a will on the round's end key
// makes the member's death end the round for everybody within milliseconds. A member that died
// before arming is dropped while the round is still incomplete (its liveness key is gone). One
// that dies or goes silent (frozen, cut off: its heartbeats stop for the keep-alive window) after
// the round completed and before it armed is lost too: the static backend's round ends (a
// restart), the dynamic backend forms the next round without it (ReformedWithout,
// rendezvous_state.h; no restart consumed). The rendezvous
// connection lives as long as the agent, so the will covers the whole round; Disarm() cancels it
// once the exit barrier passed.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/asio_coroutine.h"
#include "rendezvous/core/node_info.h"

namespace cpplaunch {

// torchrun's port for a c10d --rdzv-endpoint that names none.
constexpr int kDefaultC10dPort = 29400;

// A rendezvous that cannot complete: timeout, unreachable store, hosts that disagree, a closed
// job. what() is one line saying what was tried (address:port, from which host) and why it failed.
class RendezvousError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Close()'s reason when the job's hosts finished: the closed rendezvous says so to late hosts.
inline constexpr std::string_view kJobFinished = "the job finished";

// The job finished while this host waited in its rendezvous without a place (a spare that was
// never needed): not a failure of this host. what() is the line to say.
class RendezvousNotNeeded : public RendezvousError {
 public:
  using RendezvousError::RendezvousError;
};

struct RendezvousSettings {
  std::string run_id = "none";
  int min_nodes = 1;
  int max_nodes = 1;
  int node_rank = 0;     // static only
  int max_restarts = 0;  // checked against the other hosts'
  // A digest of the command the workers run, checked against the first host's: a job that
  // shares another's --rdzv-id is refused instead of joining it. "" = not compared.
  std::string command_digest;
  std::string store_host;  // where the agents' store listens (numeric or name)
  int store_port = 0;
  std::string master_addr;  // what workers get as MASTER_ADDR / MASTER_PORT
  int master_port = 0;
  // The agents' shared secret (docs/security.md; empty: none). Every store connection of the
  // rendezvous is an agent connection proven with it.
  std::string secret;
  // This agent. An empty self.addr is filled with the local address of the connection to the
  // store (the interface that routes to it); a node_id starting with '_' gets that address put
  // in front ("_<pid>" -> "10.0.0.2_<pid>").
  NodeInfo self;
  // Where this agent serves its status endpoint (launcher/status/), given self.addr; read when
  // self.addr is known, before the first join. Empty, or an empty answer: it serves none.
  std::function<std::string(const std::string& addr)> status_address;
  // torchrun's --rdzv-conf keys with torchrun's defaults; the launcher overrides the keys given.
  std::chrono::milliseconds timeout{std::chrono::seconds(900)};  // static: connect + round
  std::chrono::milliseconds join_timeout{std::chrono::seconds(600)};
  std::chrono::milliseconds last_call_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds close_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds read_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds progress_interval{std::chrono::seconds(5)};
  // The job channel's heartbeats, which cover the arming of a round too (store_steps.h: ArmRound):
  // a member silent for interval x max_attempt is lost.
  std::chrono::milliseconds keep_alive_interval{std::chrono::seconds(5)};
  int keep_alive_max_attempt = 3;
  // Dynamic: a host that was the root cause of this many failed rounds is set aside when a spare
  // can take its place (quarantine.h); 0: never. Not a torchrun key.
  int quarantine_after = 2;
  // Dynamic: the part of the cluster this host sits in (segments.h), "" for none. Not a torchrun
  // key.
  std::string segment;
  // Dynamic: how long a queued join waits while the admission makes no progress before this host
  // joins by itself (the host holding the admission role may be frozen). Not a torchrun key.
  std::chrono::milliseconds queue_timeout{std::chrono::seconds(5)};
  // Receives a progress line while a round waits for hosts (every progress_interval), on the
  // loop thread. May be empty.
  std::function<void(const std::string&)> progress;
  // Receives a line for each store request answered and each join step taken (the agent's
  // LOGLEVEL=DEBUG), on the loop thread. Empty: no such line is built.
  std::function<void(const std::string&)> trace;
};

// A member of a round as this agent knows it.
struct RoundPeer {
  int group_rank = 0;
  NodeInfo node;
  // The member's liveness key: it holds the member's node id while the member's agent is
  // connected. The job channel deletes the key of a member whose heartbeats lapsed, so that a
  // replacement can take its place.
  std::string liveness_key;
};

struct RendezvousResult {
  int64_t round = 0;
  int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT, the same on every host
  int group_rank = 0;
  int group_size = 0;      // members of the round
  int64_t base_rank = 0;   // RANK of this host's local rank 0
  int64_t world_size = 0;  // the workers of every member
  // Ascending group rank. The dynamic backends (c10d, etcd) list only what this agent needs
  // (round_assignment.h: KnownRanks: itself, group rank 0 and its heartbeat peers; every member
  // in a round of at most 8), so that a round of N hosts costs O(N log N) in all rather than N^2;
  // the static backend lists every member.
  std::vector<RoundPeer> members;
  std::string master_addr;
  int master_port = 0;
  // The node ids the job set aside so far (dynamic backends: quarantine.h), for messages.
  std::vector<std::string> set_aside;

  int group_world_size() const { return group_size; }
  // The listed member at `group_rank`, or nullptr.
  const RoundPeer* Find(int group_rank) const;
  // The same; throws std::out_of_range for a member that is not listed.
  const RoundPeer& Member(int group_rank) const;
  const NodeInfo& self() const { return Member(group_rank).node; }
};

// Lists every member (nodes[i] and liveness_keys[i] are group rank i's) and sets group_size,
// base_rank and world_size from their local world sizes; result->group_rank must be set first.
void SetEveryMember(RendezvousResult* result, std::vector<NodeInfo> nodes,
                    const std::vector<std::string>& liveness_keys);

// How the previous round ended, for the next call of Next().
struct RoundTransition {
  int64_t round = 0;      // the round that ended
  int restart_count = 0;  // its restart count
  bool failure = true;    // true: the new round consumes a restart (count + 1)
  // The group rank whose host the round lost (its agent died or went silent: the round's end
  // named it), -1 for none: a spare may take it in the next round (seats.h).
  int lost_group_rank = -1;
  // The group rank whose workers failed first (the round's root cause), -1 for none: the next
  // round counts it, and sets a host that keeps failing aside (quarantine.h).
  int failed_group_rank = -1;
};

class AsyncStoreClient;

class Rendezvous {
 public:
  template <class T>
  using Task = boost::asio::awaitable<T>;
  virtual ~Rendezvous() = default;

  // Joins the first round (nullopt) or the round after `previous`. Throws RendezvousError.
  // Before returning a round > 0, stale keys of the previous round's workers are gone from the
  // store, so restarted PyTorch workers cannot see them.
  virtual Task<RendezvousResult> Next(std::optional<RoundTransition> previous) = 0;
  // The job is over: late hosts are told `reason` (dynamic). Best effort, bounded by
  // close_timeout; never throws.
  virtual Task<void> Close(std::string reason) = 0;
  // This agent leaves the job cleanly (its exit barrier passed): its will is cancelled, so that
  // its exit does not end the round for the others. Best effort; never throws.
  virtual Task<void> Disarm() = 0;
  // Closes the connection: a pending Next() ends at once with an error (e.g. on a signal).
  virtual void Cancel() = 0;
  // The agent's store connection (static and c10d backends; null for etcd), connected by the
  // first Next(). It lives as long as the rendezvous, owning the agent's liveness key and will;
  // the round's JobChannel works on views of it, so an agent holds one store connection.
  virtual AsyncStoreClient* connection() { return nullptr; }
};

// Fills settings->self.addr / node_id from the connected client as described above.
void CompleteSelf(const AsyncStoreClient& client, RendezvousSettings* settings);

// Store keys of the agents, in one place. Agents' keys never start with '/', so they cannot
// collide with PyTorch clients' keys (which always do, except "init/").
namespace rendezvous_keys {
std::string Base(const std::string& run_id);                  // "cpplaunch/<run_id>/"
std::string Round(const std::string& run_id, int64_t round);  // Base + "r<round>/"
std::string Heartbeat(const std::string& run_id, const std::string& node_id);
}  // namespace rendezvous_keys

}  // namespace cpplaunch
