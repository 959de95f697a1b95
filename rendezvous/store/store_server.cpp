#include "rendezvous/store/store_server.h"

#include <algorithm>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <system_error>
#include <utility>

#include "base/memory_trim.h"
#include "base/socket_io.h"
#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/peer_networks.h"
#include "rendezvous/store/store_server_impl.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// Connections accepted per readiness event before other handlers get a turn.
constexpr int kAcceptBurst = 4096;
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);
// Once this much of large output buffers has been freed (kKeepBuffer), the heap is trimmed.
constexpr size_t kTrimAfter = size_t{16} * 1024 * 1024;

[[noreturn]] void ThrowBindError(const std::string& host, uint16_t port,
                                 const std::string& port_option, const error_code& ec) {
  std::string message =
      "cannot bind the store to " + Endpoint{host, port}.ToString() + ": " + ec.message();
  if (ec == asio::error::address_in_use && port_option == "--master-port") {
    message += "; choose another --master-port or --master-port=0";
  } else if (ec == asio::error::address_in_use) {
    // An endpoint's port has no "0": another job's store there is the usual cause.
    message += "; the port is " + port_option + "'s: give " + port_option +
               " another HOST:PORT (is another job's store on it?)";
  } else if (ec == boost::system::errc::address_not_available) {
    message += "; is it an address of this host?";
  }
  throw StoreBindError(message, ec == asio::error::address_in_use);
}

}  // namespace

StoreServerImpl::StoreServerImpl(asio::io_context& io, StoreServerOptions options)
    : io_(io),
      options_(std::move(options)),
      acceptor_(io),
      accept_retry_(io),
      budget_(options_.budget),
      workers_(&budget_, budget_.agent_reserve()),
      agents_(&budget_) {
  // What clients make the store hold is many small blocks (waits' keys and entries): freed as
  // they go, so that the trim after a closed attacker's million registrations is short.
  CoalesceSmallFrees();
  Listen(options_.bind_host);
}

// "::" is dual stack (as PyTorch's server, which falls back to 0.0.0.0 where IPv6 is off);
// any other host binds exactly the address it names.
void StoreServerImpl::Listen(const std::string& host) {
  error_code ec;
  if (host == "::" || host.empty()) {
    if (TryListen(tcp::endpoint(tcp::v6(), options_.port), true, ec)) return;
    if (ec == asio::error::address_family_not_supported ||
        ec == boost::system::errc::address_not_available) {
      if (TryListen(tcp::endpoint(tcp::v4(), options_.port), false, ec)) return;
    }
    ThrowBindError("::", options_.port, options_.port_option, ec);
  }
  auto address = asio::ip::make_address(host, ec);
  if (ec) {
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(host, std::to_string(options_.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
      throw StoreBindError("cannot bind the store to " + Endpoint{host, options_.port}.ToString() +
                           ": cannot resolve '" + host + "': " + ec.message());
    }
    address = results.begin()->endpoint().address();
  }
  if (!TryListen(tcp::endpoint(address, options_.port), false, ec)) {
    ThrowBindError(address.to_string(), options_.port, options_.port_option, ec);
  }
}

bool StoreServerImpl::TryListen(const tcp::endpoint& endpoint, bool dual_stack, error_code& ec) {
  acceptor_.close(ec);
  if (acceptor_.open(endpoint.protocol(), ec)) return false;
  v6_ = endpoint.protocol() == tcp::v6();
  // Workers forked later must not hold the port. fcntl cannot fail on the descriptor just
  // opened, so its result is not checked.
  SetCloseOnExec(acceptor_.native_handle());
  // A restarted agent must be able to bind the port again while the previous run's
  // connections sit in TIME_WAIT.
  acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (dual_stack) acceptor_.set_option(asio::ip::v6_only(false), ec);
  if (acceptor_.bind(endpoint, ec)) return false;
  if (acceptor_.listen(asio::socket_base::max_listen_connections, ec)) return false;
  if (acceptor_.non_blocking(true, ec)) return false;
  port_ = acceptor_.local_endpoint(ec).port();
  return !ec;
}

void StoreServerImpl::WaitForConnection() {
  acceptor_.async_wait(tcp::acceptor::wait_read, [self = shared_from_this()](const error_code& ec) {
    if (self->stopped_ || ec == asio::error::operation_aborted) return;
    self->AcceptBurst();
  });
}

void StoreServerImpl::AcceptBurst() {
  if (DrainAcceptQueue()) return WaitForConnection();
  // Out of descriptors or memory: back off instead of spinning on a readable acceptor.
  accept_retry_.expires_after(kAcceptRetryDelay);
  accept_retry_.async_wait([self = shared_from_this()](const error_code& ec) {
    if (!ec && !self->stopped_) self->WaitForConnection();
  });
}

// Accepts up to kAcceptBurst pending connections; false on a resource error (EMFILE, ENOMEM..).
// AcceptConnection (accept4) gives each connection CLOEXEC and non-blocking in one call; Asio's
// accept does not set CLOEXEC, and workers forked by the agent must not inherit store connections.
bool StoreServerImpl::DrainAcceptQueue() {
  for (int i = 0; i < kAcceptBurst && !stopped_; ++i) {
    AcceptResult accepted = AcceptConnection(acceptor_.native_handle());
    switch (accepted.status) {
      case AcceptStatus::kAccepted:
        AddSession(std::move(accepted.fd));
        break;
      case AcceptStatus::kQueueEmpty:
        return true;
      case AcceptStatus::kRetry:
        break;
      case AcceptStatus::kFailed:
        return false;
    }
  }
  return true;
}

void StoreServerImpl::AddSession(UniqueFd fd) {
  tcp::socket socket(io_);
  error_code ec;
  socket.assign(v6_ ? tcp::v6() : tcp::v4(), fd.get(), ec);
  if (ec) return;  // `fd` still owns the descriptor and closes it
  fd.release();    // `socket` owns it now
  // Over the limit the connection is closed at once rather than left in the backlog: clients
  // retry with backoff, and the server keeps its descriptors for the sessions it has.
  if (connection_count_ >= options_.max_connections || !PeerAllowed(socket)) {
    ++counters_.refused;
    return;  // `socket` closes it
  }
  socket.set_option(tcp::no_delay(true), ec);
  const ConnId id = NewId();
  auto session = std::make_shared<StoreSession>(*this, std::move(socket), id, SessionLimits());
  sessions_[id] = session;
  ++connection_count_;
  session->StartReading();
}

// A request longer than the store could ever hold is refused when its length is read, before
// its body arrives (and before it is buffered).
WireLimits StoreServerImpl::SessionLimits() const {
  WireLimits limits = options_.limits;
  limits.max_request_bytes = std::min(limits.max_request_bytes, budget_.request_ceiling());
  return limits;
}

// Sessions and wait slots share one dense id space (the tables index arrays by it).
ConnId StoreServerImpl::NewId() {
  if (!free_ids_.empty()) {
    const ConnId id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  sessions_.emplace_back();
  slots_.emplace_back();
  return static_cast<ConnId>(sessions_.size() - 1);
}

bool StoreServerImpl::PeerAllowed(const tcp::socket& socket) {
  if (options_.allowed_peers.empty()) return true;
  // An unknown peer ("an unknown peer" is no address) is refused too.
  const std::string address = PeerText(socket);
  if (cpplaunch::PeerAllowed(options_.allowed_peers, address)) return true;
  Warn(refused_peers_,
       "refused a connection from " + address + ": not in the store's allowed_peers");
  return false;
}

void StoreServerImpl::Warn(RateLimitedLog& log, const std::string& line) {
  if (auto text = log.Admit(RateLimitedLog::Clock::now(), line)) {
    std::fprintf(stderr, "cpplaunch store: %s\n", text->c_str());
  }
}

// Posted, and only after enough was freed: the trim walks the heap. While a release runs in
// slices (ReleaseLater), its end trims.
void StoreServerImpl::Released(size_t bytes) {
  released_ += bytes;
  if (released_ >= kTrimAfter && !release_posted_) TrimSoon();
}

void StoreServerImpl::TrimSoon() {
  if (released_ == 0 || trim_posted_) return;
  trim_posted_ = true;
  asio::post(io_, [self = shared_from_this()] {
    self->trim_posted_ = false;
    self->released_ = 0;
    ReturnFreeHeapToSystem();
  });
}

void StoreServerImpl::MarkDirty(StoreSession& session) {
  dirty_.push_back(session.shared_from_this());
}

// Re-entrant: a flush that completes synchronously may resume a paused session, which decodes
// its held-back input and flushes again.
void StoreServerImpl::FlushDirty() {
  std::vector<std::shared_ptr<StoreSession>> batch;
  batch.swap(dirty_);
  for (auto& session : batch) session->Flush();
  batch.clear();
  if (dirty_.empty()) dirty_.swap(batch);  // keep the capacity
  ReleaseLater();  // what the requests just applied left to free (closed waits' registrations)
}

void StoreServerImpl::Close(StoreSession& session) {
  if (session.closed()) return;
  const uint64_t held_before = budget_.held();
  session.Shutdown();
  const ConnId id = session.id();
  // Its pending waits go with it (their ids are free again: no long request runs any more).
  std::vector<ConnId> slots;
  for (const auto& [tag, slot] : session.waits()) slots.push_back(slot);
  session.waits().clear();
  for (ConnId slot : slots) {
    agents_.Disconnect(slot);
    slots_[slot] = WaitSlot{};
    free_ids_.push_back(slot);
  }
  if (session.long_id() != id && slots_[session.long_id()].owner == id) {
    agents_.Disconnect(session.long_id());
    slots_[session.long_id()] = WaitSlot{};
    free_ids_.push_back(session.long_id());
  }
  workers_.Disconnect(id);
  // An agent's owned keys go and its wills fire (unless the whole server stops). Their wake-ups
  // are delivered once the slot is free, so none is queued to the closed session.
  TableEffects closing;
  agents_.Disconnect(id, stopped_ ? nullptr : &closing);
  sessions_[id].reset();  // handlers in flight still hold the session
  // What it held for requests (waits' registrations, an unfinished request) is many small
  // blocks: counted towards the next heap trim, so the process's RSS comes back down.
  if (budget_.held() < held_before) Released(held_before - budget_.held());
  free_ids_.push_back(id);
  --connection_count_;
  ReleaseLater();  // its waits' registrations, swept in slices
  if (!closing.woken.empty() || !closing.notices.empty()) {
    DeliverWakeups(closing);
    // Posted: Close() runs inside handlers that may be delivering or flushing already.
    asio::post(io_, [self = shared_from_this()] { self->FlushDirty(); });
  }
  if (connection_count_ == 0) {
    // Posted: Close() runs inside session handlers and Stop().
    for (auto& idle : idle_waiters_) asio::post(io_, std::move(idle));
    idle_waiters_.clear();
  }
}

void StoreServerImpl::Stop() {
  if (stopped_) return;
  stopped_ = true;
  error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  for (auto& session : sessions_) {
    if (session) Close(*session);
  }
}

void StoreServerImpl::WhenIdle(std::function<void()> idle) {
  if (connection_count_ == 0) return asio::post(io_, std::move(idle));
  idle_waiters_.push_back(std::move(idle));
}

// ---- StoreServer

StoreServer::StoreServer(asio::io_context& io, StoreServerOptions options)
    : impl_(std::make_shared<StoreServerImpl>(io, std::move(options))) {
  impl_->StartAccepting();
}

StoreServer::~StoreServer() { impl_->Stop(); }

uint16_t StoreServer::port() const { return impl_->port(); }
void StoreServer::Stop() { impl_->Stop(); }
size_t StoreServer::connection_count() const { return impl_->connection_count(); }
void StoreServer::WhenIdle(std::function<void()> idle) { impl_->WhenIdle(std::move(idle)); }

size_t StoreServer::key_count() const { return impl_->key_count(); }
size_t StoreServer::agent_key_count() const { return impl_->agent_key_count(); }
const StoreBudget& StoreServer::budget() const { return impl_->budget(); }
StoreCounters StoreServer::counters() const { return impl_->counters(); }

}  // namespace cpplaunch
