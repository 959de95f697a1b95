#pragma once
// The key-value store the agents rendezvous through: PyTorch's c10d::Store surface.
// Implemented by StoreClient (TCP, the TCPStore protocol) and by a PrefixStore decorator.

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

// Thrown by every Store operation on a broken connection, a protocol error or a deadline.
// what() is one line naming the operation and the key.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class StoreTimeout : public StoreError {
 public:
  using StoreError::StoreError;
};
// A connect that gave up while the store's host name did not resolve (a Kubernetes service
// not published yet, a typo): the message is StoreError's; resolver_error() the resolver's own
// words ("Host not found (authoritative)"), for a progress line that says what is awaited.
class StoreNameUnresolved : public StoreError {
 public:
  StoreNameUnresolved(const std::string& message, std::string resolver_error)
      : StoreError(message), resolver_error_(std::move(resolver_error)) {}
  const std::string& resolver_error() const { return resolver_error_; }

 private:
  std::string resolver_error_;
};

// A connect whose TCP connection succeeded but whose store handshake did not: the peer is not a
// store (another service on the port) or a store that refuses this client. answer() is what the
// peer sent before the handshake failed, quoted for one line ("" when it closed the connection
// without a byte); a peer that answered anything is plainly not a store. refused(): a cpplaunch
// store that checked this agent's secret and said no (the message says so; retrying cannot help).
class StoreHandshakeFailed : public StoreError {
 public:
  StoreHandshakeFailed(const std::string& message, std::string answer, bool refused = false)
      : StoreError(message), answer_(std::move(answer)), refused_(refused) {}
  const std::string& answer() const { return answer_; }
  bool refused() const { return refused_; }

 private:
  std::string answer_;
  bool refused_;
};

// Not thread-safe: one caller at a time (as PyTorch's clients hold a mutex per store).
// Every call blocks until the server answers or the store's timeout expires.
class Store {
 public:
  virtual ~Store() = default;

  virtual void Set(const std::string& key, const Bytes& value) = 0;
  // Blocks until the key exists (WAIT then GET, as PyTorch's client does).
  virtual Bytes Get(const std::string& key) = 0;
  // Atomically adds delta to the decimal counter at key (missing = 0); returns the new value.
  virtual int64_t Add(const std::string& key, int64_t delta) = 0;
  // TCPStore semantics: returns the value now stored (== desired on success).
  virtual Bytes CompareSet(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  // True when every key exists; never blocks.
  virtual bool Check(const std::vector<std::string>& keys) = 0;
  // Blocks until every key exists; throws StoreTimeout after `timeout`.
  virtual void Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  virtual bool DeleteKey(const std::string& key) = 0;
  virtual int64_t NumKeys() = 0;
};

}  // namespace cpplaunch
