#pragma once
// The one exception of the etcd client (rendezvous/etcd/etcd_client.h). Pure.

#include <stdexcept>
#include <string>

namespace cpplaunch::etcd {

// One line for a person: what was asked, which endpoints were tried and why each failed, or
// etcd's own error message.
class EtcdError : public std::runtime_error {
 public:
  enum class Kind {
    kUnreachable,  // no endpoint answered within the request timeout (connection, TLS, 5xx)
    kRefused,      // etcd answered with an error (HTTP 4xx: an unknown lease, bad input, ...)
    kMalformed,    // an answer that is not etcd's JSON
    kClosed,       // Client::Close() was called
    kSetup,        // the settings cannot work (no endpoint, unreadable TLS files)
  };
  EtcdError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }
  // The cluster may answer later: a caller may retry (a rendezvous waits, a lease waits).
  bool unreachable() const { return kind_ == Kind::kUnreachable; }

 private:
  Kind kind_;
};

}  // namespace cpplaunch::etcd
