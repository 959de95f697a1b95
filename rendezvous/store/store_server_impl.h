#pragma once
// The store server's state behind StoreServer (store_server.h), internal to the store: the
// acceptor, the sessions (store_session.h) by id, the two namespaces' tables and the agents'
// wait slots. Its methods are defined in three files along the seams of the work:
//   store_server.cpp          listening, accepting, connection bookkeeping, Close/Stop/WhenIdle,
//                             output flushing and heap trimming
//   store_request_loop.cpp    one session's input: decode, apply, deliver replies and wake-ups,
//                             long requests in slices, output admission and refusals
//   store_agent_requests.cpp  what only agent connections do: the handshake, tagged WAITs in
//                             slots of their own, CANCEL_WAIT
//
// Threads: the io_context's thread only (see StoreServer).

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/rate_limited_log.h"
#include "rendezvous/store/store_budget.h"
#include "rendezvous/store/store_server.h"
#include "rendezvous/store/store_session.h"
#include "rendezvous/store/wire/request_decoder.h"

namespace cpplaunch {

class StoreServerImpl : public std::enable_shared_from_this<StoreServerImpl> {
 public:
  StoreServerImpl(boost::asio::io_context& io, StoreServerOptions options);
  void StartAccepting() { WaitForConnection(); }
  void Stop();
  uint16_t port() const { return port_; }
  size_t connection_count() const { return connection_count_; }
  void WhenIdle(std::function<void()> idle);
  size_t key_count() const { return workers_.num_keys(); }
  size_t agent_key_count() const { return agents_.num_keys(); }
  StoreBudget& budget() { return budget_; }
  StoreCounters counters() const { return counters_; }

  // Called by sessions.
  void OnInput(StoreSession& session, std::string_view input);
  void ContinueLong(StoreSession& session);
  void Released(size_t bytes);
  void Close(StoreSession& session);
  void FlushDirty();
  void MarkDirty(StoreSession& session);

 private:
  using tcp = boost::asio::ip::tcp;

  // store_server.cpp
  void Listen(const std::string& host);
  bool TryListen(const tcp::endpoint& endpoint, bool dual_stack, boost::system::error_code& ec);
  void WaitForConnection();
  void AcceptBurst();
  bool DrainAcceptQueue();
  void AddSession(UniqueFd fd);
  ConnId NewId();
  bool PeerAllowed(const tcp::socket& socket);
  void Warn(RateLimitedLog& log, const std::string& line);
  void TrimSoon();

  // store_request_loop.cpp
  bool Apply(StoreSession& session, Request& request);
  bool HoldInput(StoreSession& session);
  void FinishLong(StoreSession& session);
  void ReleaseLater();
  KvTable& TableOf(const StoreSession& session) { return session.agent() ? agents_ : workers_; }
  WireLimits SessionLimits() const;
  void DeliverWakeups(const TableEffects& effects);
  bool Applied(StoreSession& session);
  void ContinueLater(StoreSession& session);
  void Deliver(StoreSession& requester);
  bool QueueTo(ConnId conn, std::string_view bytes, std::string_view what);
  bool QueueTo(ConnId conn, std::string&& bytes, std::string_view what);
  StoreSession* Admit(ConnId conn, size_t size, std::string_view what);
  enum class Over { kLimit, kBudget };
  void Refuse(StoreSession& session, std::string_view what, const std::string& reason,
              Over over = Over::kLimit);

  // store_agent_requests.cpp
  bool AgentHandshake(StoreSession& session, Request& request);
  void StartTaggedWait(StoreSession& session, Request& request);
  void CancelTaggedWait(StoreSession& session, uint32_t wait_tag);
  void ReleaseSlot(ConnId slot);
  void WakeSlot(ConnId slot);

  boost::asio::io_context& io_;
  StoreServerOptions options_;
  tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  uint16_t port_ = 0;
  bool v6_ = true;
  bool stopped_ = false;
  StoreBudget budget_;
  RateLimitedLog refusals_{std::chrono::seconds(1)};        // over the budget or a limit
  RateLimitedLog agent_refusals_{std::chrono::seconds(1)};  // the same, of agent connections
  size_t released_ = 0;  // bytes freed in large buffers or many blocks since the last heap trim
  bool trim_posted_ = false;
  bool release_posted_ = false;  // a ReleaseLater turn is queued
  KvTable workers_;              // PyTorch clients and strangers
  KvTable agents_;               // connections that passed the agent handshake
  RateLimitedLog refused_peers_;
  RateLimitedLog refused_agents_;
  TableEffects effects_;
  std::vector<std::shared_ptr<StoreSession>> sessions_;  // indexed by ConnId; null = free slot
  std::vector<ConnId> free_ids_;
  // An agent connection's pending WAIT is a slot: an id of its own in the agents' table, so that
  // one connection can wait on several things at once (tag_framing.h). Indexed by ConnId as
  // sessions_; `owner` is kNoOwner for ids that are not slots.
  static constexpr ConnId kNoOwner = ~ConnId{0};
  struct WaitSlot {
    ConnId owner = kNoOwner;
    uint32_t tag = 0;
  };
  std::vector<WaitSlot> slots_;
  size_t connection_count_ = 0;
  StoreCounters counters_;
  std::vector<std::function<void()>> idle_waiters_;  // WhenIdle callers
  int inputs_since_accept_ = 0;
  std::vector<std::shared_ptr<StoreSession>> dirty_;  // sessions with output to hand to the socket
};

}  // namespace cpplaunch
