#pragma once
// An asynchronous TCPStore client (modern dialect: VALIDATE first, CANCEL_WAIT for bounded
// waits) for code that runs on an io_context it must not block: the agent's rendezvous and its
// job-wide channel. Each operation is a C++20 coroutine (boost::asio::awaitable).
//
// Threads: every call, and the destructor, on the thread running the client's executor.
// Concurrency: an agent connection (Options::agent) is tagged (tag_framing.h): any number of
// operations may be outstanding at once, several Wait()s included, and their replies are matched
// by tag, so one connection serves every activity of an agent. Views (the second constructor)
// share it, each ending only its own operations. Other connections speak PyTorch's wire, which
// has no tags: ONE operation at a time (starting a second one while one is pending throws
// std::logic_error).
// Errors: every operation throws StoreError on a broken connection, a protocol error or when the
// client was closed, and StoreTimeout when the store does not answer within
// Options::operation_timeout. The message is one line naming the command, the key and the store.
// After an error the connection is closed; later operations throw at once.
// Lifetime: destroying the client closes the connection; pending operations then finish with
// StoreError, also those whose reply had already arrived (their coroutines resume afterwards), so
// that no operation of a closed or destroyed client ever returns a value: a coroutine whose
// object (a rendezvous) was destroyed with its client while it awaited only unwinds. Close()
// does the same. The coroutine's caller must keep the client alive while it awaits. A view keeps
// the connection's state alive, not the connection: it fails once its owner is closed.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/asio_coroutine.h"
#include "rendezvous/store/client/store.h"

namespace cpplaunch {

struct StoreConnection;   // store_connection.h
struct StoreClientScope;  // store_connection.h

class AsyncStoreClient {
 public:
  using Clock = std::chrono::steady_clock;
  template <class T>
  using Task = boost::asio::awaitable<T>;

  struct Options {
    // Bounds every request except Wait(), and each connection attempt (torchrun's read_timeout).
    std::chrono::milliseconds operation_timeout{60000};
    // An agent connection (docs/security.md): Connect() performs the agent handshake with
    // `secret` (key bytes; empty when none is configured), and every command then works on the
    // agents' namespace of the store, out of reach of PyTorch clients.
    bool agent = false;
    std::string secret;
    // Told of each answered request ("SET 'key' answered in 0.4 ms"), on the loop thread; empty:
    // nothing is built (the agent's LOGLEVEL=DEBUG lines).
    std::function<void(const std::string&)> trace;

    // An agent connection's options.
    static Options Agent(std::chrono::milliseconds timeout, std::string secret,
                         std::function<void(const std::string&)> trace = {}) {
      return Options{timeout, true, std::move(secret), std::move(trace)};
    }
  };

  explicit AsyncStoreClient(const boost::asio::any_io_executor& executor);
  AsyncStoreClient(const boost::asio::any_io_executor& executor, const Options& options);
  // A view of `owner`'s agent connection (throws std::logic_error for a non-agent one): the same
  // operations on the same connection, with `operation_timeout` for each. A view's operation
  // that times out throws StoreTimeout and leaves the connection open (its late reply is
  // dropped). Close() on a view ends only the view's pending operations (StoreError; its pending
  // WAITs are cancelled on the wire) and later ones throw; the connection, its owned keys and
  // wills stay. Connect() on a view throws std::logic_error.
  AsyncStoreClient(AsyncStoreClient& owner, std::chrono::milliseconds operation_timeout);
  ~AsyncStoreClient();
  AsyncStoreClient(const AsyncStoreClient&) = delete;
  AsyncStoreClient& operator=(const AsyncStoreClient&) = delete;

  // Connects to host:port (a numeric IPv4/IPv6 address or a name; every resolved address is
  // tried), sends VALIDATE (or, with Options::agent, performs the agent handshake) and a PING,
  // and checks the echo. Refused or unreachable connections are retried with a growing pause
  // (50 ms to 1 s) until `deadline`; then throws StoreError: "cannot reach the store at H:P
  // (tried for 12.0 s): Connection refused". A store that refuses the agent handshake is not
  // retried: StoreError "the store at H:P refused this agent: wrong or missing secret (see
  // docs/security.md)".
  Task<void> Connect(std::string host, int port, Clock::time_point deadline);

  Task<void> Set(std::string key, Bytes value);
  // Appends `value` to the key's value (creating it), as one atomic step.
  Task<void> Append(std::string key, Bytes value);
  // The value of an existing key (no waiting: call Wait first if it may be missing).
  Task<Bytes> Get(std::string key);
  Task<int64_t> Add(std::string key, int64_t delta);
  // TCPStore semantics: returns the value now stored (== desired on success).
  Task<Bytes> CompareSet(std::string key, Bytes expected, Bytes desired);
  Task<bool> Check(std::vector<std::string> keys);
  // Waits until every key exists: true; false when `timeout` passed first (the server's wait is
  // cancelled with CANCEL_WAIT, so the connection stays usable). Pass Clock::duration::max()
  // (or any timeout over a year) to wait until the key appears or Close() is called.
  Task<bool> Wait(std::vector<std::string> keys, std::chrono::milliseconds timeout);
  Task<std::vector<Bytes>> MultiGet(std::vector<std::string> keys);
  Task<void> MultiSet(std::vector<std::string> keys, std::vector<Bytes> values);
  Task<bool> DeleteKey(std::string key);
  // Every key in the store, as stored (LIST_KEYS; PyTorch's own client strips a '/').
  Task<std::vector<std::string>> ListKeys();

  // Agent connections only (Options::agent; elsewhere they throw StoreError at once).
  // When `key` is absent, stores `value` owned by this connection and returns `value`;
  // otherwise changes nothing and returns the stored value. An owned key is deleted the moment
  // this connection closes (Close(), destruction, the process's death); DeleteKey also removes it.
  Task<Bytes> Claim(std::string key, Bytes value);
  // When this connection closes for any reason, `key` is set to `value` unless it exists then
  // (after this connection's owned keys were deleted), waking its WAITers. A second will on the
  // same key replaces the first. At most 64 keys per connection: more throws StoreError (the
  // connection stays usable).
  Task<void> Will(std::string key, Bytes value);
  // Forgets this connection's wills (a clean exit).
  Task<void> CancelWills();
  // Deletes every key of the workers' namespace, however many, without listing them; returns
  // how many there were.
  Task<int64_t> ClearWorkerKeys();
  // What arming a round writes (ARM, command_table.h), in this order: the will on `end_key`
  // (this connection's earlier wills cancelled first), one more on the counter `beat_key`, the
  // mark `armed_key`, one more on the counter `count_key`, and `all_armed_key` when that count
  // reaches `members`. One request instead of five.
  struct Arming {
    std::string end_key;
    Bytes will;
    std::string beat_key;
    std::string armed_key;
    std::string count_key;
    int64_t members = 0;
    std::string all_armed_key;
  };
  // Returns the count after this connection's. `arming` is read before the first suspension.
  Task<int64_t> Arm(const Arming& arming);

  // Closes the connection; a pending operation finishes with StoreError ("closed"), a pending
  // Connect() stops retrying, and later Connect() calls fail: the client is done. On a view:
  // see the view's constructor.
  void Close();
  bool cancelled() const;  // Close() was called (on this client or view)
  // cancelled() as a function that outlives the client: it also turns true when the client is
  // destroyed. For a coroutine that holds only a reference to the client and may resume after
  // its owner is gone (ConnectWithProgress between attempts).
  std::function<bool()> ClosedProbe() const;
  bool connected() const;
  // "host:port" of the store (brackets around IPv6), for messages.
  const std::string& peer() const;
  // The numeric address of this end of the connection ("" when not connected): the address of
  // the interface that routes to the store, which is what the other hosts can reach.
  std::string local_address() const;

 private:
  // The connection, shared with the views and every operation in flight; this object's scope.
  std::shared_ptr<StoreConnection> impl_;
  std::shared_ptr<StoreClientScope> scope_;
};

}  // namespace cpplaunch
