#pragma once
// The state one etcd Client shares with its kept leases and watches (internal to
// etcd_client/): the settings, the transport and its wire (gRPC: one HTTP/2 connection per
// member; the gateway: idle HTTP/1.1 connections and the TLS context), the member that answered
// last, and the one request path with failover (Call).
//
// Threads: the executor's thread. Lifetime: shared; every pending coroutine holds it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "etcd_client/etcd_client.h"
#include "etcd_client/etcd_wire.h"
#include "etcd_client/grpc_connection.h"
#include "etcd_client/http_connection.h"

namespace cpplaunch::etcd {

// What Client::Close() stops: a kept lease, a watch.
class Stoppable {
 public:
  virtual ~Stoppable() = default;
  virtual void Stop() = 0;
};

struct Client::Impl {
  using Clock = std::chrono::steady_clock;

  Impl(boost::asio::any_io_executor executor, ClientSettings settings);

  // Sends `rpc` with `body` (encoded by `wire`) with failover (etcd_client.h) and returns the
  // body of the successful answer. `what` names the request in errors ("put '/k'"). Throws
  // EtcdError.
  Task<std::string> Call(std::string what, Rpc rpc, std::string body);
  // The lease calls the client and its kept leases share (etcd_client.h says what each does).
  Task<LeaseGrant> GrantLease(std::chrono::seconds ttl);
  Task<std::chrono::seconds> KeepAliveOnce(int64_t lease);
  Task<void> RevokeLease(int64_t lease);

  // A new gateway connection to endpoint `index`, registered so that Close() reaches it.
  std::shared_ptr<HttpConnection> NewConnection(size_t index);
  // The gRPC connection to endpoint `index`, connected first if it has none open (callers that
  // come meanwhile wait for that one connect). nullptr and *why when it cannot connect.
  Task<std::shared_ptr<GrpcConnection>> GrpcChannel(size_t index, Clock::time_point deadline,
                                                    std::string* why);
  void Register(std::weak_ptr<Stoppable> stoppable);
  void Close();
  void ThrowIfClosed(const std::string& what) const;
  // A random duration in [low, high]: retry pauses that spread the agents of a job apart.
  Clock::duration Jitter(Clock::duration low, Clock::duration high);

  // The waits of one request (or one watch's opening) across its rounds of the endpoint list:
  // the bound of each attempt, and the pause after each round (etcd_client.cpp says why).
  struct Pacing {
    explicit Pacing(Impl& owner);
    Clock::time_point AttemptBy(Clock::time_point deadline) const;
    // After a failed attempt that was bounded by `attempt_by`.
    void Failed(Clock::time_point attempt_by);
    // At the end of a round of the list: how long to pause before the next.
    Clock::duration RoundPause();

    Impl& impl;
    Clock::duration attempt_timeout;
    Clock::duration pause;
    bool unanswered = false;  // an attempt of this round ran out of time
  };

  boost::asio::any_io_executor executor;
  ClientSettings settings;
  std::shared_ptr<TlsContext> tls;  // https only
  bool grpc = false;                // the transport (ClientSettings::transport, https aside)
  const Wire* wire = nullptr;       // its codec
  size_t preferred = 0;             // the endpoint that answered last
  bool closed = false;
  std::minstd_rand random{std::random_device{}()};

 private:
  struct Attempt;
  Task<Attempt> TryOnce(size_t index, const std::string& path, const std::string& body,
                        Clock::time_point deadline);
  Task<Attempt> TryGrpc(size_t index, const std::string& path, const std::string& body,
                        Clock::time_point deadline);
  std::shared_ptr<HttpConnection> TakeIdle(size_t index);

  // gRPC: one connection per endpoint, and the connect in progress that others wait for.
  struct ChannelSlot {
    std::shared_ptr<GrpcConnection> connection;
    std::shared_ptr<boost::asio::steady_timer> connecting;
    std::string failure;  // why the last connect failed
  };
  std::vector<ChannelSlot> channels_;
  std::vector<std::shared_ptr<HttpConnection>> idle_;
  std::vector<std::weak_ptr<HttpConnection>> live_;
  std::vector<std::weak_ptr<Stoppable>> stoppables_;
};

// Quotes a key for messages, bytes outside printable ASCII as \xNN, cut at 80 characters.
std::string QuoteKey(const std::string& key);

}  // namespace cpplaunch::etcd
