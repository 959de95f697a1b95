#include "rendezvous/store/store_server.h"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/memory_trim.h"
#include "base/socket_io.h"
#include "base/unique_fd.h"
#include "rendezvous/store/agent_handshake.h"
#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/rate_limited_log.h"
#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/request_decoder.h"
#include "rendezvous/store/wire/tag_framing.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// A session stops reading (and decoding) while this much output is queued, so a client that
// pipelines requests without reading replies cannot grow memory; it resumes below a quarter.
constexpr size_t kPauseReadingAt = 1024 * 1024;
// Per-session read buffer: none until the first byte arrives (idle callback sockets cost
// nothing), then 2 KiB, doubled while reads fill it (large values) up to 64 KiB, and shrunk back
// when reads get small again.
constexpr size_t kMinReadBuffer = 2 * 1024;
constexpr size_t kMaxReadBuffer = 64 * 1024;
// Connections accepted per readiness event before other handlers get a turn.
constexpr int kAcceptBurst = 4096;
// Session inputs handled between two non-blocking looks at the listen queue.
constexpr int kAcceptPollInterval = 32;
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);
// Output buffers larger than this are freed after use rather than kept for the next reply, and
// once this much has been freed the heap is trimmed, so a big reply does not stay in the process.
constexpr size_t kKeepBuffer = 1024 * 1024;
constexpr size_t kTrimAfter = 16 * 1024 * 1024;
// WAITs (and BARRIERs) one agent connection may have pending at once; a wait costs a table slot
// and its keys, so an agent cannot make the server hold them without bound.
constexpr size_t kMaxWaitsPerConnection = 4096;

[[noreturn]] void ThrowBindError(const std::string& host, uint16_t port, const error_code& ec) {
  std::string message =
      "cannot bind the store to " + Endpoint{host, port}.ToString() + ": " + ec.message();
  if (ec == asio::error::address_in_use) {
    message += "; choose another --master-port or --master-port=0";
  } else if (ec == boost::system::errc::address_not_available) {
    message += "; is it an address of this host?";
  }
  throw StoreBindError(message, ec == asio::error::address_in_use);
}

// The peer's address for messages and the allow-list. A dual-stack port sees IPv4 peers as
// ::ffff:a.b.c.d; they are named (and matched) as IPv4.
std::string PeerText(const tcp::socket& socket) {
  error_code ec;
  auto peer = socket.remote_endpoint(ec);
  if (ec) return "an unknown peer";
  auto ip = peer.address();
  if (ip.is_v6() && ip.to_v6().is_v4_mapped()) {
    ip = asio::ip::make_address_v4(asio::ip::v4_mapped, ip.to_v6());
  }
  return ip.to_string();
}

}  // namespace

class StoreSession;

class StoreServerImpl : public std::enable_shared_from_this<StoreServerImpl> {
 public:
  StoreServerImpl(asio::io_context& io, StoreServerOptions options);
  void StartAccepting() { WaitForConnection(); }
  void Stop();
  uint16_t port() const { return port_; }
  size_t connection_count() const { return connection_count_; }
  void WhenIdle(std::function<void()> idle);
  size_t key_count() const { return workers_.num_keys(); }
  size_t agent_key_count() const { return agents_.num_keys(); }
  StoreBudget& budget() { return budget_; }

  // Called by sessions.
  void OnInput(StoreSession& session, std::string_view input);
  void ContinueLong(StoreSession& session);
  void Released(size_t bytes);
  void Close(StoreSession& session);
  void FlushDirty();
  void MarkDirty(StoreSession& session);

 private:
  void Listen(const std::string& host);
  bool TryListen(const tcp::endpoint& endpoint, bool dual_stack, error_code& ec);
  void WaitForConnection();
  void AcceptBurst();
  bool DrainAcceptQueue();
  void AddSession(UniqueFd fd);
  bool Apply(StoreSession& session, Request& request);
  void StartTaggedWait(StoreSession& session, Request& request);
  void CancelTaggedWait(StoreSession& session, uint32_t wait_tag);
  void ReleaseSlot(ConnId slot);
  void FinishLong(StoreSession& session);
  ConnId NewId();
  bool AgentHandshake(StoreSession& session, Request& request);
  bool PeerAllowed(const tcp::socket& socket);
  void ReleaseClearedKeys();
  void Warn(RateLimitedLog& log, const std::string& line);
  KvTable& TableOf(const StoreSession& session);
  void DeliverWakeups(const TableEffects& effects);
  void WakeSlot(ConnId slot);
  bool Applied(StoreSession& session);
  void ContinueLater(StoreSession& session);
  void Deliver(StoreSession& requester);
  bool QueueTo(ConnId conn, std::string_view bytes, std::string_view what);
  bool QueueTo(ConnId conn, std::string&& bytes, std::string_view what);
  StoreSession* Admit(ConnId conn, size_t size, std::string_view what);
  void Refuse(StoreSession& session, std::string_view what, const std::string& reason);

  asio::io_context& io_;
  StoreServerOptions options_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;
  uint16_t port_ = 0;
  bool v6_ = true;
  bool stopped_ = false;
  StoreBudget budget_;
  RateLimitedLog refusals_{std::chrono::seconds(1)};  // over the budget or a limit
  size_t released_ = 0;  // bytes of large buffers freed since the last heap trim
  bool trim_posted_ = false;
  KvTable workers_;  // PyTorch clients and strangers
  KvTable agents_;   // connections that passed the agent handshake
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
  std::vector<std::function<void()>> idle_waiters_;  // WhenIdle callers
  int inputs_since_accept_ = 0;
  std::vector<std::shared_ptr<StoreSession>> dirty_;  // sessions with output to hand to the socket
};

// One connection: an incremental decoder, the bytes waiting to be written, and flow control.
// Lives while a handler holds it or the server's table does; `closed_` makes late handlers
// return without touching the server.
class StoreSession : public std::enable_shared_from_this<StoreSession> {
 public:
  StoreSession(StoreServerImpl& server, tcp::socket socket, ConnId id, const WireLimits& limits)
      : server_(server), socket_(std::move(socket)), id_(id), decoder_(limits), long_id_(id) {}

  ConnId id() const { return id_; }
  RequestDecoder& decoder() { return decoder_; }
  // Agent handshake state: the nonce sent, and whether the proof was accepted.
  std::string& nonce() { return nonce_; }
  bool agent() const { return agent_; }
  void set_agent() { agent_ = true; }
  // Tagged framing (agent connections): the tag the current request's reply must start with,
  // until it was sent; the pending WAITs by tag; the id a long request runs under (a slot for a
  // WAIT, else the session's own).
  void OweTag(uint32_t tag, bool owed) {
    reply_tag_ = tag;
    tag_owed_ = owed;
  }
  // Appends the owed tag to *out (once).
  void PayTag(std::string* out) {
    if (!tag_owed_) return;
    tag_owed_ = false;
    EncodeTag(reply_tag_, out);
  }
  bool tag_owed() const { return tag_owed_; }
  std::unordered_map<uint32_t, ConnId>& waits() { return waits_; }
  ConnId long_id() const { return long_id_; }
  void set_long_id(ConnId id) { long_id_ = id; }
  bool in_long() const { return long_; }
  // A wake-up that arrives while a long request's reply is being sent waits until it ends.
  void Hold(std::string_view bytes) { held_.append(bytes); }
  std::string TakeHeld() { return std::exchange(held_, {}); }
  std::string peer_address() const { return PeerText(socket_); }
  bool closed() const { return closed_; }
  bool accepting_input() const { return !closed_ && !closing_ && !paused_; }
  size_t queued() const { return out_.size() + writing_.size() - written_; }
  // The command being applied (for refusal lines; a long one spans several handlers).
  Command command() const { return command_; }
  void set_command(Command command) { command_ = command; }
  std::string peer() const {
    error_code ec;
    auto remote = socket_.remote_endpoint(ec);
    if (ec) return "a closed connection";
    auto address = remote.address();
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
      address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    }
    return Endpoint{address.to_string(), remote.port()}.ToString();
  }

  // Until the first byte, a buffer-less wait; afterwards asynchronous reads, which Asio tries
  // speculatively and which, unlike waits, do not re-register the socket with epoll each time.
  void StartReading() {
    if (!accepting_input() || read_armed_) return;
    read_armed_ = true;
    if (buffer_.empty()) {
      socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
        self->read_armed_ = false;
        if (self->closed_) return;
        if (ec) return self->server_.Close(*self);
        self->buffer_.resize(kMinReadBuffer);
        self->StartReading();
      });
      return;
    }
    socket_.async_read_some(
        asio::buffer(buffer_),
        [self = shared_from_this()](const error_code& ec, size_t n) { self->OnRead(ec, n); });
  }

  // The caller checked the budget; the bytes are charged to it until written or dropped.
  void Queue(std::string_view bytes) {
    out_.append(bytes);
    Charge(bytes.size());
    MarkDirty();
  }
  // The same for a big buffer the caller gives up: taken without a copy when nothing is queued.
  void Queue(std::string&& bytes) {
    if (!out_.empty()) return Queue(std::string_view(bytes));
    Charge(bytes.size());
    out_.swap(bytes);
    MarkDirty();
  }
  void MarkDirty() {
    if (!dirty_) {
      dirty_ = true;
      server_.MarkDirty(*this);
    }
  }

  // Input left undecoded while output is over the pause mark or a long request is applied.
  void Pause(std::string_view rest) {
    paused_ = true;
    pending_in_.assign(rest);
  }
  // A long request runs in slices (the server continues it); input waits until it ends.
  void BeginLong(std::string_view rest) {
    long_ = true;
    Pause(rest);
  }
  void EndLong() {
    long_ = false;
    MaybeResume();
  }
  // The next slice waits for the client to read: continue once the output is low again.
  void ContinueAfterWrite() { continue_after_write_ = true; }

  // Protocol error or failed request: send what is queued, then close.
  void CloseAfterFlush() {
    closing_ = true;
    if (queued() == 0) server_.Close(*this);
  }

  // Hands queued output to the socket: a direct non-blocking write first (most replies are a
  // few bytes and the socket buffer has room), an asynchronous write for what remains.
  void Flush() {
    dirty_ = false;
    if (closed_ || write_in_flight_ || out_.empty()) return;
    error_code ec;
    size_t written = socket_.write_some(asio::buffer(out_), ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
      return server_.Close(*this);
    }
    Uncharge(written);
    if (written == out_.size()) {
      out_.clear();
      ReleaseIfLarge(out_);
      return AfterWrite();
    }
    // The rest is written from where the direct write stopped: no copy of a big reply's tail.
    writing_.swap(out_);
    written_ = written;
    write_in_flight_ = true;
    asio::async_write(
        socket_, asio::buffer(writing_.data() + written, writing_.size() - written),
        [self = shared_from_this()](const error_code& error, size_t) { self->OnWritten(error); });
  }

  // Closes the socket and gives back what the session held: its budget share and its buffers
  // (the one an asynchronous write still owns is freed when that write completes).
  void Shutdown() {
    closed_ = true;
    error_code ignored;
    socket_.close(ignored);
    Uncharge(charged_);
    ReleaseIfLarge(out_);
    out_.clear();
    ReleaseIfLarge(pending_in_);
    pending_in_.clear();
    if (!write_in_flight_) ReleaseIfLarge(writing_);
  }

 private:
  void OnRead(const error_code& ec, size_t n) {
    read_armed_ = false;
    if (closed_) return;
    if (ec) return server_.Close(*this);  // EOF or reset: the client is gone
    server_.OnInput(*this, std::string_view(buffer_.data(), n));
    server_.FlushDirty();
    // A flush that completed at once may have resumed this session and armed the next read
    // into buffer_ already; the buffer must not move under it.
    if (!read_armed_) ResizeBuffer(n);
    StartReading();
  }

  void ResizeBuffer(size_t last_read) {
    size_t size = buffer_.size();
    if (last_read == size && size < kMaxReadBuffer) {
      buffer_.resize(size * 2);
    } else if (last_read < size / 8 && size > kMinReadBuffer) {
      std::vector<char>(size / 2).swap(buffer_);
    }
  }

  void OnWritten(const error_code& ec) {
    write_in_flight_ = false;
    if (closed_) return ReleaseIfLarge(writing_);
    if (ec) return server_.Close(*this);
    Uncharge(writing_.size() - written_);
    writing_.clear();
    written_ = 0;
    ReleaseIfLarge(writing_);
    if (!out_.empty()) return Flush();
    AfterWrite();
  }

  void AfterWrite() {
    if (closing_) return server_.Close(*this);
    if (continue_after_write_ && queued() < kPauseReadingAt / 4) {
      continue_after_write_ = false;
      server_.ContinueLong(*this);
      server_.FlushDirty();
      return;
    }
    MaybeResume();
  }

  void MaybeResume() {
    if (paused_ && !long_ && !closed_ && queued() < kPauseReadingAt / 4) {
      paused_ = false;
      std::string rest = std::move(pending_in_);
      pending_in_.clear();
      server_.OnInput(*this, rest);
      server_.FlushDirty();
      StartReading();
    }
  }

  void Charge(size_t bytes) {
    charged_ += bytes;
    server_.budget().AddQueued(bytes);
  }
  void Uncharge(size_t bytes) {
    bytes = std::min(bytes, charged_);
    charged_ -= bytes;
    server_.budget().RemoveQueued(bytes);
  }
  // A buffer that grew for a big reply is freed, not kept at its size for small ones.
  void ReleaseIfLarge(std::string& buffer) {
    if (buffer.capacity() <= kKeepBuffer || !buffer.empty()) return;
    const size_t capacity = buffer.capacity();
    std::string().swap(buffer);
    server_.Released(capacity);
  }

  StoreServerImpl& server_;
  tcp::socket socket_;
  ConnId id_;
  Command command_ = Command::kGetNumKeys;
  size_t charged_ = 0;  // output bytes counted in the server's budget
  RequestDecoder decoder_;
  std::string out_;      // queued, not yet handed to the socket
  std::string writing_;  // owned by the asynchronous write in flight
  size_t written_ = 0;   // bytes at the start of writing_ that were sent before it started
  std::string pending_in_;
  std::string nonce_;
  bool agent_ = false;
  uint32_t reply_tag_ = 0;
  bool tag_owed_ = false;
  std::unordered_map<uint32_t, ConnId> waits_;
  ConnId long_id_ = 0;
  std::string held_;
  std::vector<char> buffer_;
  bool read_armed_ = false;
  bool write_in_flight_ = false;
  bool dirty_ = false;
  bool paused_ = false;
  bool long_ = false;
  bool continue_after_write_ = false;
  bool closing_ = false;
  bool closed_ = false;
};

// ---- StoreServerImpl

StoreServerImpl::StoreServerImpl(asio::io_context& io, StoreServerOptions options)
    : io_(io),
      options_(std::move(options)),
      acceptor_(io),
      accept_retry_(io),
      budget_(options_.budget),
      workers_(&budget_),
      agents_(&budget_) {
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
    ThrowBindError("::", options_.port, ec);
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
    ThrowBindError(address.to_string(), options_.port, ec);
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
  if (connection_count_ >= options_.max_connections) return;  // `socket` closes it
  if (!PeerAllowed(socket)) return;
  socket.set_option(tcp::no_delay(true), ec);
  const ConnId id = NewId();
  auto session = std::make_shared<StoreSession>(*this, std::move(socket), id, options_.limits);
  sessions_[id] = session;
  ++connection_count_;
  session->StartReading();
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

// Decodes and applies every complete request in `input`, stopping early when the session must
// close or has queued enough output to pause.
void StoreServerImpl::OnInput(StoreSession& session, std::string_view input) {
  // In a connection storm the acceptor's readiness can sit behind thousands of session events
  // in epoll's ready list while the listen queue (SOMAXCONN) overflows and clients fall into
  // SYN retransmission (1 s, 3 s, ...). Polling the queue every few inputs bounds that delay.
  if (++inputs_since_accept_ >= kAcceptPollInterval) {
    inputs_since_accept_ = 0;
    DrainAcceptQueue();
  }
  RequestDecoder& decoder = session.decoder();
  while (session.accepting_input()) {
    DecodeResult result = decoder.Feed(input);
    input.remove_prefix(result.consumed);
    if (result.status == DecodeStatus::kNeedMore) return;
    if (result.status == DecodeStatus::kMalformed) return session.CloseAfterFlush();
    session.set_command(decoder.request().command);
    if (!Apply(session, decoder.request())) {
      Deliver(session);  // a refused handshake's answer goes out before the close
      return session.CloseAfterFlush();
    }
    if (!Applied(session)) return;
    if (effects_.more) {
      session.BeginLong(input);
      return ContinueLater(session);
    }
    if (session.queued() > kPauseReadingAt) {
      session.Pause(input);
      return;
    }
  }
}

// Applies one request to the requester's namespace (effects_ as KvTable::Apply leaves them);
// false when a handshake is refused: the connection closes after its answer. The handshake and
// CLEAR_WORKER_KEYS are the server's own: they concern the connection and the other namespace.
bool StoreServerImpl::Apply(StoreSession& session, Request& request) {
  session.set_long_id(session.id());
  if (session.agent()) {
    session.OweTag(request.tag, ReplyShapeOf(request.command) != ReplyShape::kNone);
  }
  switch (request.command) {
    case Command::kAgentHello:
    case Command::kAgentProof:
      effects_.Clear();
      return AgentHandshake(session, request);
    case Command::kClearWorkerKeys:
      effects_.Clear();
      EncodeI64(workers_.Clear(&effects_), &effects_.reply);
      ReleaseClearedKeys();
      return true;
    case Command::kWait:
    case Command::kBarrier:
      if (!session.agent()) break;
      StartTaggedWait(session, request);
      return true;
    case Command::kCancelWait:
      if (!session.agent()) break;
      CancelTaggedWait(session, request.u32);
      return true;
    default:
      break;
  }
  TableOf(session).Apply(session.id(), request, &effects_);
  return true;
}

// An agent's WAIT runs in a slot of its own; the requests behind it go on being answered, and
// its reply goes out with its tag when the keys appear (WakeSlot) or it is cancelled.
void StoreServerImpl::StartTaggedWait(StoreSession& session, Request& request) {
  effects_.Clear();
  auto& waits = session.waits();
  if (waits.size() >= kMaxWaitsPerConnection || waits.count(request.tag) != 0) {
    effects_.refused = waits.size() >= kMaxWaitsPerConnection;
    effects_.error = effects_.refused
                         ? "more than " + std::to_string(kMaxWaitsPerConnection) +
                               " pending waits on one connection"
                         : "a second pending WAIT with tag " + std::to_string(request.tag);
    return;
  }
  const ConnId slot = NewId();
  slots_[slot] = WaitSlot{session.id(), request.tag};
  waits[request.tag] = slot;
  session.set_long_id(slot);
  agents_.Apply(slot, request, &effects_);
  if (!effects_.more && !agents_.waiting(slot)) ReleaseSlot(slot);  // answered (or failed)
}

// Answers the WAIT tagged `wait_tag` with WAIT_CANCELED (under its tag), then CANCEL_WAIT itself:
// WAIT_CANCELED when it cancelled that wait, STOP_WAITING when none was pending (answered).
void StoreServerImpl::CancelTaggedWait(StoreSession& session, uint32_t wait_tag) {
  effects_.Clear();
  auto it = session.waits().find(wait_tag);
  if (it == session.waits().end()) return EncodeU8(kStopWaiting, &effects_.reply);
  const ConnId slot = it->second;
  ReleaseSlot(slot);
  std::string canceled;
  EncodeTag(wait_tag, &canceled);
  EncodeU8(kWaitCanceled, &canceled);
  QueueTo(session.id(), std::string_view(canceled), "WAIT_CANCELED");
  EncodeU8(kWaitCanceled, &effects_.reply);
}

// Forgets a slot. Its id is reused only once no long request of its owner runs under it.
void StoreServerImpl::ReleaseSlot(ConnId slot) {
  const WaitSlot entry = slots_[slot];
  if (entry.owner == kNoOwner) return;
  agents_.Disconnect(slot);
  StoreSession* owner = sessions_[entry.owner].get();
  if (owner != nullptr) owner->waits().erase(entry.tag);
  if (owner != nullptr && owner->in_long() && owner->long_id() == slot) return;
  slots_[slot] = WaitSlot{};
  free_ids_.push_back(slot);
}

// A slot's wait was answered: STOP_WAITING under its tag.
void StoreServerImpl::WakeSlot(ConnId slot) {
  const WaitSlot entry = slots_[slot];
  ReleaseSlot(slot);
  std::string bytes;
  EncodeTag(entry.tag, &bytes);
  EncodeU8(kStopWaiting, &bytes);
  if (entry.owner >= sessions_.size() || !sessions_[entry.owner]) return;
  StoreSession& owner = *sessions_[entry.owner];
  // Inside a long request's reply (a MULTI_GET in slices) a tagged reply would split it.
  if (owner.in_long()) return owner.Hold(bytes);
  QueueTo(entry.owner, std::string_view(bytes), "a wake-up");
}

// The decoder enforces HELLO, then PROOF, then the rest; this answers them (agent_handshake.h).
bool StoreServerImpl::AgentHandshake(StoreSession& session, Request& request) {
  if (request.command == Command::kAgentHello) {
    if (request.u32 != kAgentHelloMagic) return false;
    try {
      session.nonce() = NewAgentNonce();
    } catch (const std::exception& error) {
      Warn(refused_agents_, std::string("cannot make an agent handshake nonce: ") + error.what());
      return false;
    }
    EncodeBytes(session.nonce(), &effects_.reply);
    return true;
  }
  const bool valid = AgentProofValid(options_.secret, session.nonce(), request.values.at(0));
  session.nonce().clear();  // one proof per nonce
  EncodeU8(valid ? kAgentAccepted : kAgentRefused, &effects_.reply);
  if (!valid) {
    Warn(refused_agents_, "refused an agent handshake from " + session.peer_address() +
                              ": wrong or missing secret (see docs/security.md)");
    return false;
  }
  session.set_agent();
  return true;
}

// Frees what CLEAR_WORKER_KEYS set aside, a slice per turn of the loop (a few milliseconds
// each), so other clients and the agent's supervision are served in between.
void StoreServerImpl::ReleaseClearedKeys() {
  constexpr size_t kReleaseSlice = 8192;
  asio::post(io_, [self = shared_from_this()] {
    if (self->workers_.ReleaseSome(kReleaseSlice)) self->ReleaseClearedKeys();
  });
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

KvTable& StoreServerImpl::TableOf(const StoreSession& session) {
  return session.agent() ? agents_ : workers_;
}

// Delivers what the table produced for `session`'s request. False when the session is closed
// or closing (a failed or refused request).
bool StoreServerImpl::Applied(StoreSession& session) {
  if (!effects_.error.empty()) {
    if (effects_.refused) Refuse(session, CommandName(session.command()), effects_.error);
    session.CloseAfterFlush();
    return false;
  }
  Deliver(session);
  return !session.closed();
}

// The next slice of a long request runs after the handlers already queued (other clients,
// timers, supervision); a MULTI_GET's next slice also waits until the client read the last.
void StoreServerImpl::ContinueLater(StoreSession& session) {
  if (session.queued() > kPauseReadingAt) return session.ContinueAfterWrite();
  asio::post(io_, [self = shared_from_this(), session = session.shared_from_this()] {
    if (!session->closed() && !self->stopped_) {
      self->ContinueLong(*session);
      self->FlushDirty();
    }
  });
}

void StoreServerImpl::ContinueLong(StoreSession& session) {
  TableOf(session).Continue(session.long_id(), &effects_);
  if (!Applied(session)) return;
  if (effects_.more) return ContinueLater(session);
  FinishLong(session);
}

// The end of a long request: a WAIT's slot is freed unless it still waits; wake-ups held back
// during the reply go out.
void StoreServerImpl::FinishLong(StoreSession& session) {
  const ConnId slot = session.long_id();
  session.set_long_id(session.id());
  if (slot != session.id() && slots_[slot].owner == session.id() &&
      (!agents_.waiting(slot) || session.waits().count(slots_[slot].tag) == 0)) {
    ReleaseSlot(slot);
  }
  std::string held = session.TakeHeld();
  if (!held.empty() && !QueueTo(session.id(), std::string_view(held), "a wake-up")) return;
  session.EndLong();  // may decode and apply the input held back meanwhile
}

void StoreServerImpl::Deliver(StoreSession& requester) {
  const std::string_view command = CommandName(requester.command());
  // The tag goes with the first bytes of the reply, or alone before an empty one (a MULTI_GET
  // of no keys); a WAIT that is left pending owes it to its wake-up.
  if (requester.tag_owed() && (!effects_.reply.empty() || !effects_.more) &&
      !(requester.long_id() != requester.id() && effects_.reply.empty())) {
    std::string tagged;
    requester.PayTag(&tagged);
    tagged.append(effects_.reply);
    effects_.reply.swap(tagged);
  }
  if (effects_.reply.size() > kKeepBuffer) {
    QueueTo(requester.id(), std::move(effects_.reply), command);
  } else if (!effects_.reply.empty()) {
    QueueTo(requester.id(), effects_.reply, command);
  }
  DeliverWakeups(effects_);
}

// Wake-ups and WATCH_KEY notifications of `effects` (a request's, or a closed agent's wills).
void StoreServerImpl::DeliverWakeups(const TableEffects& effects) {
  static constexpr char kStop = static_cast<char>(kStopWaiting);
  for (ConnId conn : effects.woken) {
    if (conn < slots_.size() && slots_[conn].owner != kNoOwner) {
      WakeSlot(conn);
    } else {
      QueueTo(conn, std::string_view(&kStop, 1), "a wake-up");
    }
  }
  for (const auto& notice : effects.notices) {
    for (ConnId conn : notice.conns) {
      if (notice.bytes.size() == notice.size) {
        QueueTo(conn, notice.bytes, "a WATCH_KEY notification");
      } else if (conn < sessions_.size() && sessions_[conn]) {
        Refuse(
            *sessions_[conn], "a WATCH_KEY notification",
            "a notification of " + ByteSize(notice.size) + " would exceed " + budget_.Describe());
        Close(*sessions_[conn]);
      }
    }
  }
}

// False when `conn` is gone or was closed because the bytes do not fit.
bool StoreServerImpl::QueueTo(ConnId conn, std::string_view bytes, std::string_view what) {
  StoreSession* session = Admit(conn, bytes.size(), what);
  if (session != nullptr) session->Queue(bytes);
  return session != nullptr;
}

bool StoreServerImpl::QueueTo(ConnId conn, std::string&& bytes, std::string_view what) {
  StoreSession* session = Admit(conn, bytes.size(), what);
  if (session != nullptr) session->Queue(std::move(bytes));
  return session != nullptr;
}

// The session that may take `size` more bytes of output, or null (gone, or closed now).
StoreSession* StoreServerImpl::Admit(ConnId conn, size_t size, std::string_view what) {
  if (conn >= sessions_.size() || !sessions_[conn]) return nullptr;
  StoreSession& session = *sessions_[conn];
  // A peer that never reads its replies or wake-ups is dropped, not buffered without bound.
  if (session.queued() + size > options_.max_output_bytes) {
    Close(session);
    return nullptr;
  }
  if (!budget_.CanQueue(size)) {
    Refuse(session, what,
           "queueing " + ByteSize(size) + " of output would exceed " + budget_.Describe());
    Close(session);
    return nullptr;
  }
  return &session;
}

// One line on the host's console (rate-limited); the caller closes the session.
void StoreServerImpl::Refuse(StoreSession& session, std::string_view what,
                             const std::string& reason) {
  auto line = refusals_.Admit(RateLimitedLog::Clock::now(), "store: refused " + std::string(what) +
                                                                " from " + session.peer() + ": " +
                                                                reason + "; connection closed");
  if (!line) return;
  if (options_.report) return options_.report(*line);
  std::fprintf(stderr, "%s\n", line->c_str());
}

// Posted, and only after enough was freed: the trim walks the heap.
void StoreServerImpl::Released(size_t bytes) {
  released_ += bytes;
  if (released_ < kTrimAfter || trim_posted_) return;
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
}

void StoreServerImpl::Close(StoreSession& session) {
  if (session.closed()) return;
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
  free_ids_.push_back(id);
  --connection_count_;
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

void StoreServerImpl::WhenIdle(std::function<void()> idle) {
  if (connection_count_ == 0) return asio::post(io_, std::move(idle));
  idle_waiters_.push_back(std::move(idle));
}
size_t StoreServer::key_count() const { return impl_->key_count(); }
size_t StoreServer::agent_key_count() const { return impl_->agent_key_count(); }
const StoreBudget& StoreServer::budget() const { return impl_->budget(); }

}  // namespace cpplaunch
