#include "rendezvous/store/async_store_client.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "rendezvous/store/agent_handshake.h"
#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/owner_table.h"
#include "rendezvous/store/peer_answer.h"
#include "rendezvous/store/reply_codec.h"
#include "rendezvous/store/tag_framing.h"
#include "rendezvous/store/wire_format.h"

namespace cpplaunch {
namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kFirstRetryPause = std::chrono::milliseconds(50);
constexpr auto kLongestRetryPause = std::chrono::milliseconds(1000);
// Enough of a peer's first answer to name it in one line.
constexpr std::size_t kHeardBytes = 200;
// A timeout this long means "no timeout": the wait ends when the key appears or on Close().
constexpr auto kForever = std::chrono::hours(24 * 365);

std::string Seconds(std::chrono::steady_clock::duration duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(duration).count());
  return text;
}

std::string Describe(const Request& request) {
  std::string text = CommandName(request.command);
  if (!request.keys.empty()) {
    text += " '" + request.keys.front() + "'";
    if (request.keys.size() > 1) text += " (+" + std::to_string(request.keys.size() - 1) + " keys)";
  }
  return text;
}

// Requests are built outside the coroutines: GCC 12 mis-compiles braced initializer lists
// inside co_await expressions ("array used as initializer").
Request MakeRequest(Command command, std::vector<std::string> keys = {},
                    std::vector<Bytes> values = {}) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  return request;
}

Request KeyRequest(Command command, std::string key) {
  Request request;
  request.command = command;
  request.keys.push_back(std::move(key));
  return request;
}

Request KeyValueRequest(Command command, std::string key, Bytes value) {
  Request request = KeyRequest(command, std::move(key));
  request.values.push_back(std::move(value));
  return request;
}

}  // namespace

// What one AsyncStoreClient object may do on the shared connection: the owner's scope, or a
// view's (AsyncStoreClient(AsyncStoreClient&, milliseconds)).
struct AsyncStoreClient::Scope {
  uint64_t id = 0;
  bool owner = true;
  bool closed = false;
  std::chrono::milliseconds timeout{0};  // each operation's (Wait(): its cancellation's)
};

struct AsyncStoreClient::Impl : std::enable_shared_from_this<Impl> {
  // One outstanding request of an agent connection, found by its tag when the reply comes.
  struct Call {
    explicit Call(const asio::any_io_executor& executor) : signal(executor) {}
    asio::steady_timer signal;  // cancelled when the call is done
    bool done = false;
    Reply reply;
    std::string error;  // set: the call failed (the connection closed, or its scope)
    uint64_t scope = 0;
    uint32_t tag = 0;
    bool wait = false;  // a WAIT still pending on the wire
    void Finish(std::string failure = {}) {
      if (done) return;
      done = true;
      error = std::move(failure);
      signal.cancel();
    }
  };

  Impl(asio::any_io_executor executor, Options opts)
      : socket(executor), timer(executor), options(opts) {}

  tcp::socket socket;
  asio::steady_timer timer;  // the deadline of the current operation
  Options options;
  std::string peer;
  std::string input;  // bytes received and not yet decoded
  std::string heard;  // the first bytes received on this connection (what answered a connect)
  std::array<char, 4096> read_buffer{};
  ReplyDecoder decoder;
  bool busy = false;
  bool open = false;
  bool timed_out = false;
  bool cancelled = false;   // Close() was called: Connect stops retrying
  uint64_t generation = 0;  // tells a stale timer expiry from the current one
  std::string closed_reason = "not connected";
  // Agent connections after the handshake: tagged, pipelined (tag_framing.h).
  bool tagged = false;
  TaggedReplyDecoder tagged_decoder;
  std::unordered_map<uint32_t, std::shared_ptr<Call>> calls;  // awaiting their replies
  uint32_t next_tag = 1;
  uint64_t next_scope = 1;
  std::string outbox;                               // requests not yet handed to the socket
  std::vector<std::shared_ptr<Call>> outbox_calls;  // requests without a reply: done once written
  std::string sending;
  std::vector<std::shared_ptr<Call>> sending_calls;
  bool send_in_flight = false;

  // Marks the client busy for one operation; throws if it already is or is closed.
  class Turn {
   public:
    explicit Turn(Impl& impl, const char* what) : impl_(impl) {
      if (impl.busy) {
        throw std::logic_error(std::string("AsyncStoreClient: ") + what +
                               " while another operation is pending");
      }
      impl.busy = true;
    }
    ~Turn() { impl_.busy = false; }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    Impl& impl_;
  };

  void CloseWith(std::string reason) {
    if (open) closed_reason = std::move(reason);
    open = false;
    error_code ignored;
    socket.cancel(ignored);
    socket.close(ignored);
    timer.cancel();
    FailCalls();
  }

  void FailCalls() {
    auto pending = std::move(calls);
    calls.clear();
    for (auto& [tag, call] : pending) call->Finish(closed_reason);
    for (auto& call : outbox_calls) call->Finish(closed_reason);
    for (auto& call : sending_calls) call->Finish(closed_reason);
    outbox_calls.clear();
    sending_calls.clear();
    outbox.clear();
  }

  // ---- The tagged connection: one writer and one reader for every outstanding call.

  uint32_t NewTag() {
    while (next_tag == 0 || calls.count(next_tag) != 0 || tagged_decoder.expecting(next_tag)) {
      ++next_tag;
    }
    return next_tag++;
  }

  void Send(std::string_view bytes, std::shared_ptr<Call> written = nullptr) {
    outbox.append(bytes);
    if (written) outbox_calls.push_back(std::move(written));
    PumpWrite();
  }

  void PumpWrite() {
    if (send_in_flight || outbox.empty() || !open) return;
    sending.swap(outbox);
    outbox.clear();
    sending_calls.swap(outbox_calls);
    send_in_flight = true;
    asio::async_write(socket, asio::buffer(sending),
                      [self = shared_from_this()](error_code ec, size_t) {
                        self->send_in_flight = false;
                        self->sending.clear();
                        auto written = std::move(self->sending_calls);
                        self->sending_calls.clear();
                        if (ec) return self->Broken(ec);
                        for (auto& call : written) call->Finish();
                        self->PumpWrite();
                      });
  }

  void StartReading() {
    socket.async_read_some(asio::buffer(read_buffer),
                           [self = shared_from_this()](error_code ec, size_t n) {
                             if (ec) return self->Broken(ec);
                             self->input.append(self->read_buffer.data(), n);
                             if (self->DecodeReplies()) self->StartReading();
                           });
  }

  void Broken(error_code ec) {
    if (!open) return;
    CloseWith(ec == asio::error::eof ? "the store closed the connection" : ec.message());
  }

  // Hands every complete reply to its call; false when the connection was closed.
  bool DecodeReplies() {
    while (open && !input.empty()) {
      DecodeResult result = tagged_decoder.Feed(input);
      input.erase(0, result.consumed);
      if (result.status == DecodeStatus::kNeedMore) break;
      if (result.status == DecodeStatus::kMalformed) {
        CloseWith("malformed reply: " + tagged_decoder.error());
        return false;
      }
      auto it = calls.find(tagged_decoder.tag());
      if (it == calls.end()) continue;  // given up on (a timeout, a closed view): dropped
      auto call = std::move(it->second);
      calls.erase(it);
      call->reply = std::move(tagged_decoder.reply());
      call->wait = false;
      call->Finish();
    }
    return open;
  }

  // Sends `request` tagged; its call is registered unless the command has no reply, in which
  // case the call is done once the request was written.
  std::shared_ptr<Call> Issue(const Scope& scope, const Request& request, uint64_t count,
                              const std::string& what) {
    if (scope.closed) throw StoreError(what + " failed on the store at " + peer + ": closed");
    RequireOpen(what);
    if (busy) throw std::logic_error("AsyncStoreClient: " + what + " while connecting");
    auto call = std::make_shared<Call>(socket.get_executor());
    call->scope = scope.id;
    call->tag = NewTag();
    std::string bytes;
    if (!EncodeTaggedRequest(call->tag, request, &bytes)) {
      throw StoreError(what + ": not a request of the agent dialect");
    }
    const ReplyShape shape = ReplyShapeOf(request.command);
    if (shape == ReplyShape::kNone) {
      Send(bytes, call);
      return call;
    }
    tagged_decoder.Expect(call->tag, shape, count);
    calls[call->tag] = call;
    call->wait = request.command == Command::kWait;
    Send(bytes);
    return call;
  }

  // True when the call is done within `limit`.
  Task<bool> Await(std::shared_ptr<Call> call, std::chrono::steady_clock::duration limit) {
    if (call->done) co_return true;
    call->signal.expires_after(limit);
    error_code ec;
    co_await call->signal.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    co_return call->done;
  }

  // Close() (of the client or the view) or the client's destruction came first.
  bool Ended(const Scope& scope) const { return scope.closed || cancelled; }

  // A reply that arrived just before the client was closed or destroyed resumes its coroutine
  // afterwards: it must end with StoreError like every other pending operation, or the caller
  // would carry on with an object that may be gone (a rendezvous destroyed mid-join).
  void ThrowIfEnded(const Scope& scope, const std::string& what) const {
    if (Ended(scope)) throw StoreError(what + " failed on the store at " + peer + ": closed");
  }

  // The call's reply, or its error thrown.
  Reply Outcome(const Scope& scope, Call& call, const std::string& what) {
    if (!call.error.empty()) {
      throw StoreError(what + " failed on the store at " + peer + ": " + call.error);
    }
    ThrowIfEnded(scope, what);
    return std::move(call.reply);
  }

  // Gives up on a call that got no answer in time: the owner's connection closes (as an
  // untagged one would); a view's call is forgotten, its late reply dropped.
  [[noreturn]] void TimedOut(const Scope& scope, Call& call, const std::string& what,
                             std::chrono::milliseconds limit) {
    std::string message =
        what + ": no answer from the store at " + peer + " within " + Seconds(limit);
    if (scope.owner) {
      CloseWith(message);
    } else {
      calls.erase(call.tag);
      call.Finish(message);
    }
    throw StoreTimeout(message);
  }

  Task<Reply> TaggedRoundTrip(const Scope& scope, Request request, uint64_t count) {
    auto self = shared_from_this();
    const std::string what = Describe(request);
    auto call = Issue(scope, request, count, what);
    if (!co_await Await(call, scope.timeout)) TimedOut(scope, *call, what, scope.timeout);
    co_return Outcome(scope, *call, what);
  }

  // A WAIT of its own on the shared connection; its timeout cancels only this wait (tagged
  // CANCEL_WAIT), whose reply then comes as WAIT_CANCELED, or STOP_WAITING if the keys won.
  Task<bool> TaggedWait(const Scope& scope, Request request, std::chrono::milliseconds timeout) {
    auto self = shared_from_this();
    const std::string what = Describe(request);
    auto call = Issue(scope, request, 0, what);
    const bool forever = timeout >= kForever;
    if (!co_await Await(call, forever ? Clock::duration::max() / 2 : Clock::duration(timeout))) {
      SendCancelWait(call->tag);
      if (!co_await Await(call, scope.timeout)) TimedOut(scope, *call, what, scope.timeout);
    }
    co_return Outcome(scope, *call, what).u8 == kStopWaiting;
  }

  // Tells the store to cancel the WAIT sent as `wait_tag`; CANCEL_WAIT's own reply is dropped.
  void SendCancelWait(uint32_t wait_tag) {
    Request cancel = MakeRequest(Command::kCancelWait);
    cancel.u32 = wait_tag;
    const uint32_t tag = NewTag();
    std::string bytes;
    EncodeTaggedRequest(tag, cancel, &bytes);
    tagged_decoder.Expect(tag, ReplyShape::kU8);
    Send(bytes);
  }

  // Ends a view's calls: they fail with StoreError, and its pending WAITs are cancelled on the
  // wire (their replies, and the cancellations', are dropped).
  void EndScope(uint64_t scope) {
    std::vector<std::shared_ptr<Call>> ended;
    for (auto& [tag, call] : calls) {
      if (call->scope == scope) ended.push_back(call);
    }
    for (auto& call : ended) {
      calls.erase(call->tag);
      if (call->wait && open) SendCancelWait(call->tag);
      call->Finish("the client was closed");
    }
  }

  // Arms the deadline of the current operation: on expiry the socket's operations are cancelled
  // and the operation reports a timeout.
  void ArmDeadline(std::chrono::steady_clock::duration after) {
    timed_out = false;
    uint64_t mine = ++generation;
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this(), mine](error_code ec) {
      if (ec || mine != self->generation) return;
      self->timed_out = true;
      error_code ignored;
      self->socket.cancel(ignored);
    });
  }
  void Disarm() {
    ++generation;
    timer.cancel();
  }

  [[noreturn]] void Fail(const std::string& what, error_code ec) {
    if (timed_out) {
      std::string message = what + ": no answer from the store at " + peer + " within " +
                            Seconds(options.operation_timeout);
      CloseWith(message);
      throw StoreTimeout(message);
    }
    // Once closed, ec is only "operation aborted"; the recorded reason says why it was closed.
    std::string reason = !open                    ? closed_reason
                         : ec == asio::error::eof ? "the store closed the connection"
                                                  : ec.message();
    std::string message = what + " failed on the store at " + peer + ": " + reason;
    CloseWith(reason);
    throw StoreError(message);
  }

  void RequireOpen(const std::string& what) {
    if (!open) throw StoreError(what + " failed on the store at " + peer + ": " + closed_reason);
  }

  Task<void> WriteAll(const std::string& bytes, const std::string& what) {
    error_code ec;
    co_await asio::async_write(socket, asio::buffer(bytes),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) Fail(what, ec);
  }

  Task<Reply> ReadReply(ReplyShape shape, uint64_t count, const std::string& what) {
    decoder.Expect(shape, count);
    for (;;) {
      if (!input.empty() || shape == ReplyShape::kNone) {
        DecodeResult result = decoder.Feed(input);
        input.erase(0, result.consumed);
        if (result.status == DecodeStatus::kComplete) co_return std::move(decoder.reply());
        if (result.status == DecodeStatus::kMalformed) {
          CloseWith("malformed reply: " + decoder.error());
          throw StoreError(what + ": malformed reply from the store at " + peer + ": " +
                           decoder.error());
        }
      }
      error_code ec;
      size_t n = co_await socket.async_read_some(asio::buffer(read_buffer),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) Fail(what, ec);
      input.append(read_buffer.data(), n);
      if (heard.size() < kHeardBytes) heard.append(read_buffer.data(), std::min(n, kHeardBytes));
    }
  }

  Dialect dialect() const { return options.agent ? Dialect::kAgent : Dialect::kModern; }

  // Sends one request and reads its reply under the operation timeout.
  Task<Reply> RoundTrip(const Scope& scope, Request request, uint64_t count = 0) {
    if (tagged) co_return co_await TaggedRoundTrip(scope, std::move(request), count);
    std::string what = Describe(request);
    Turn turn(*this, what.c_str());
    std::string bytes;
    if (!EncodeRequest(dialect(), request, &bytes)) {
      throw StoreError(what + ": only an agent connection (AsyncStoreClient::Options::agent) " +
                       "can send this");
    }
    RequireOpen(what);
    ArmDeadline(options.operation_timeout);
    co_await WriteAll(bytes, what);
    Reply reply = co_await ReadReply(ReplyShapeOf(request.command), count, what);
    Disarm();
    ThrowIfEnded(scope, what);
    co_return reply;
  }

  // One TCP connection attempt to one address, bounded by `limit`. Returns "" or the reason.
  Task<std::string> TryConnect(const tcp::endpoint& endpoint,
                               std::chrono::steady_clock::duration limit) {
    // async_connect opens a closed socket for the endpoint's family, so closing the previous
    // attempt lets IPv4 and IPv6 addresses follow each other.
    error_code ignored;
    socket.close(ignored);
    ArmDeadline(limit);
    error_code ec;
    co_await socket.async_connect(endpoint, asio::redirect_error(asio::use_awaitable, ec));
    Disarm();
    if (timed_out)
      co_return "no answer to the connection request within " + Seconds(limit) +
          " (host down, or a firewall dropping packets?)";
    if (ec) co_return ec.message();
    socket.set_option(tcp::no_delay(true), ignored);
    co_return "";
  }

  // VALIDATE + PING: proves the peer is a TCPStore speaking the modern dialect.
  Task<void> Handshake() {
    Request validate = MakeRequest(Command::kValidate);
    validate.u32 = kValidateMagic;
    Request ping = MakeRequest(Command::kPing);
    ping.u32 = static_cast<uint32_t>(::getpid());
    // One write for both: VALIDATE has no reply, so PyTorch's client pipelines it the same way.
    std::string bytes;
    EncodeRequest(Dialect::kModern, validate, &bytes);
    EncodeRequest(Dialect::kModern, ping, &bytes);
    const std::string what = "handshake";
    ArmDeadline(options.operation_timeout);
    co_await WriteAll(bytes, what);
    Reply reply = co_await ReadReply(ReplyShape::kU32, 0, what);
    Disarm();
    CheckEcho(reply, ping);
  }

  // AGENT_HELLO, the nonce, AGENT_PROOF + PING, the verdict and the echo (agent_handshake.h).
  Task<void> AgentHandshake() {
    const std::string what = "agent handshake";
    Request hello = MakeRequest(Command::kAgentHello);
    hello.u32 = kAgentHelloMagic;
    std::string bytes;
    EncodeRequest(Dialect::kAgent, hello, &bytes);
    ArmDeadline(options.operation_timeout);
    co_await WriteAll(bytes, what);
    Reply challenge = co_await ReadReply(ReplyShape::kBytes, 0, what);
    const Bytes& nonce = challenge.values.at(0);
    if (nonce.size() != kAgentNonceBytes) {
      CloseWith("not a cpplaunch store");
      throw StoreError("the service at " + peer + " answered the agent handshake wrongly: is it " +
                       "a cpplaunch store of this version?");
    }
    Request proof = MakeRequest(Command::kAgentProof, {}, {AgentProof(options.secret, nonce)});
    Request ping = MakeRequest(Command::kPing);
    ping.u32 = static_cast<uint32_t>(::getpid());
    bytes.clear();
    EncodeRequest(Dialect::kAgent, proof, &bytes);
    // After the proof every request is tagged (tag_framing.h); calls never use tag 0.
    EncodeTaggedRequest(0, ping, &bytes);
    co_await WriteAll(bytes, what);
    Reply verdict = co_await ReadReply(ReplyShape::kU8, 0, what);
    if (verdict.u8 != kAgentAccepted) {
      CloseWith("the store refused this agent");
      throw StoreHandshakeFailed("the store at " + peer +
                                     " refused this agent: wrong or missing secret (see " +
                                     "docs/security.md)",
                                 "", true);
    }
    Reply tag = co_await ReadReply(ReplyShape::kU32, 0, what);  // a tag is a u32 too
    Reply echo = co_await ReadReply(ReplyShape::kU32, 0, what);
    Disarm();
    if (tag.u32 != 0) echo.u32 = ~ping.u32;  // not the reply it asked for
    CheckEcho(echo, ping);
  }

  void CheckEcho(const Reply& reply, const Request& ping) {
    if (reply.u32 != ping.u32) {
      CloseWith("not a TCPStore");
      throw StoreError("the service at " + peer +
                       " answered the store handshake wrongly: is it a cpplaunch or PyTorch "
                       "(>= 2.5) TCPStore?");
    }
  }
};

AsyncStoreClient::AsyncStoreClient(asio::any_io_executor executor)
    : AsyncStoreClient(std::move(executor), Options{}) {}

AsyncStoreClient::AsyncStoreClient(asio::any_io_executor executor, Options options)
    : impl_(std::make_shared<Impl>(std::move(executor), options)),
      scope_(std::make_shared<Scope>(Scope{0, true, false, options.operation_timeout})) {}

AsyncStoreClient::AsyncStoreClient(AsyncStoreClient& owner,
                                   std::chrono::milliseconds operation_timeout)
    : impl_(owner.impl_),
      scope_(std::make_shared<Scope>(Scope{impl_->next_scope++, false, false, operation_timeout})) {
  if (!impl_->options.agent) {
    throw std::logic_error("AsyncStoreClient: a view needs an agent connection (tagged)");
  }
}

AsyncStoreClient::~AsyncStoreClient() {
  if (!scope_->owner) {
    Close();
    return;
  }
  impl_->cancelled = true;
  impl_->CloseWith("client destroyed");
}

void AsyncStoreClient::Close() {
  if (!scope_->owner) {
    if (scope_->closed) return;
    scope_->closed = true;
    return impl_->EndScope(scope_->id);
  }
  scope_->closed = true;
  impl_->cancelled = true;
  impl_->CloseWith("the client was closed");
}
bool AsyncStoreClient::cancelled() const { return impl_->Ended(*scope_); }

std::function<bool()> AsyncStoreClient::ClosedProbe() const {
  return [impl = impl_, scope = scope_] { return impl->Ended(*scope); };
}
bool AsyncStoreClient::connected() const { return impl_->open && !scope_->closed; }
const std::string& AsyncStoreClient::peer() const { return impl_->peer; }

std::string AsyncStoreClient::local_address() const {
  error_code ec;
  auto endpoint = impl_->socket.local_endpoint(ec);
  if (ec) return "";
  auto address = endpoint.address();
  // A v4-mapped address (store named as ::ffff:a.b.c.d) is given in the IPv4 form other hosts
  // can connect to.
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  }
  return address.to_string();
}

AsyncStoreClient::Task<void> AsyncStoreClient::Connect(std::string host, int port,
                                                       Clock::time_point deadline) {
  // Every coroutine holds its own reference: the client may be destroyed while it is suspended,
  // and the completions that resume it still touch the Impl.
  auto impl = impl_;
  if (!scope_->owner) throw std::logic_error("AsyncStoreClient: Connect() on a view");
  Impl::Turn turn(*impl, "connect");
  if (impl->cancelled) throw StoreError("connect: the client was closed");
  impl->peer = Endpoint{host, port}.ToString();
  impl->input.clear();
  const auto started = Clock::now();
  auto pause = std::chrono::duration_cast<Clock::duration>(kFirstRetryPause);
  tcp::resolver resolver(impl->socket.get_executor());
  std::string last_error = "no attempt was made";
  std::string resolver_error;  // the last resolve's failure; "" once the name resolved
  for (;;) {
    error_code ec;
    auto results = co_await resolver.async_resolve(host, std::to_string(port),
                                                   asio::redirect_error(asio::use_awaitable, ec));
    resolver_error = ec ? ec.message() : "";
    if (ec) {
      last_error = "cannot resolve '" + host + "': " + ec.message();
    } else {
      for (const auto& entry : results) {
        auto left = deadline - Clock::now();
        // Each address gets at least a short try even past the deadline, and at most
        // operation_timeout, so one address that drops packets cannot use up the whole deadline.
        auto limit = std::min<Clock::duration>(std::max<Clock::duration>(left, kFirstRetryPause),
                                               impl->options.operation_timeout);
        std::string reason = co_await impl->TryConnect(entry.endpoint(), limit);
        if (impl->cancelled) break;
        if (reason.empty()) {
          // Open before the handshake, so that its failure is recorded as the closed reason.
          impl->open = true;
          impl->heard.clear();
          try {
            if (impl->options.agent) {
              co_await impl->AgentHandshake();
              // From here on every request is tagged and one reader takes every reply.
              impl->tagged = true;
              impl->StartReading();
            } else {
              co_await impl->Handshake();
            }
          } catch (const StoreHandshakeFailed&) {
            throw;
          } catch (const StoreTimeout&) {
            throw;  // silence is not an answer: a slow store, or a service that waits for more
          } catch (const StoreError& error) {
            // With what answered, so that the caller can tell another service from a store;
            // a handshake that Close() (or the destruction) broke is reported as closed below.
            if (!impl->cancelled)
              throw StoreHandshakeFailed(error.what(), QuoteAnswer(impl->heard));
          }
          // Closed or destroyed during the handshake (its last reply may have come in just
          // before): not connected.
          if (!impl->cancelled) co_return;
          last_error = "the client was closed";
          break;
        }
        last_error = reason;
      }
    }
    auto now = Clock::now();
    if (now >= deadline || impl->cancelled) break;
    impl->timer.expires_after(std::min(pause, deadline - now));  // Close() cancels it
    co_await impl->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (impl->cancelled) break;
    pause = std::min<Clock::duration>(pause * 2, kLongestRetryPause);
  }
  impl->closed_reason = last_error;
  std::string message = "cannot reach the store at " + impl->peer + " (tried for " +
                        Seconds(Clock::now() - started) + "): " + last_error;
  if (!resolver_error.empty()) throw StoreNameUnresolved(message, resolver_error);
  throw StoreError(message);
}

AsyncStoreClient::Task<void> AsyncStoreClient::Set(std::string key, Bytes value) {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(*scope,
                           KeyValueRequest(Command::kSet, std::move(key), std::move(value)));
}

AsyncStoreClient::Task<void> AsyncStoreClient::Append(std::string key, Bytes value) {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(*scope,
                           KeyValueRequest(Command::kAppend, std::move(key), std::move(value)));
}

AsyncStoreClient::Task<Bytes> AsyncStoreClient::Get(std::string key) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, KeyRequest(Command::kGet, std::move(key)));
  co_return std::move(reply.values.at(0));
}

AsyncStoreClient::Task<int64_t> AsyncStoreClient::Add(std::string key, int64_t delta) {
  auto impl = impl_;
  auto scope = scope_;
  Request request = KeyRequest(Command::kAdd, std::move(key));
  request.number = delta;
  Reply reply = co_await impl->RoundTrip(*scope, std::move(request));
  co_return reply.number;
}

AsyncStoreClient::Task<Bytes> AsyncStoreClient::CompareSet(std::string key, Bytes expected,
                                                           Bytes desired) {
  auto impl = impl_;
  Request request = KeyValueRequest(Command::kCompareSet, std::move(key), std::move(expected));
  request.values.push_back(std::move(desired));
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, std::move(request));
  co_return std::move(reply.values.at(0));
}

AsyncStoreClient::Task<bool> AsyncStoreClient::Check(std::vector<std::string> keys) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, MakeRequest(Command::kCheck, std::move(keys)));
  co_return reply.u8 == kCheckReady;
}

AsyncStoreClient::Task<std::vector<Bytes>> AsyncStoreClient::MultiGet(
    std::vector<std::string> keys) {
  auto impl = impl_;
  auto scope = scope_;
  uint64_t count = keys.size();
  Reply reply =
      co_await impl->RoundTrip(*scope, MakeRequest(Command::kMultiGet, std::move(keys)), count);
  co_return std::move(reply.values);
}

AsyncStoreClient::Task<void> AsyncStoreClient::MultiSet(std::vector<std::string> keys,
                                                        std::vector<Bytes> values) {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(*scope,
                           MakeRequest(Command::kMultiSet, std::move(keys), std::move(values)));
}

AsyncStoreClient::Task<bool> AsyncStoreClient::DeleteKey(std::string key) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, KeyRequest(Command::kDeleteKey, std::move(key)));
  co_return reply.number > 0;
}

AsyncStoreClient::Task<std::vector<std::string>> AsyncStoreClient::ListKeys() {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, MakeRequest(Command::kListKeys));
  co_return std::move(reply.keys);
}

AsyncStoreClient::Task<Bytes> AsyncStoreClient::Claim(std::string key, Bytes value) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(
      *scope, KeyValueRequest(Command::kClaim, std::move(key), std::move(value)));
  co_return std::move(reply.values.at(0));
}

AsyncStoreClient::Task<void> AsyncStoreClient::Will(std::string key, Bytes value) {
  auto impl = impl_;
  const std::string what = "WILL '" + key + "'";
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(
      *scope, KeyValueRequest(Command::kWill, std::move(key), std::move(value)));
  if (reply.u8 != kAgentAccepted) {
    throw StoreError(what + " refused by the store at " + impl->peer + ": more than " +
                     std::to_string(OwnerTable::kMaxWills) + " wills on one connection");
  }
}

AsyncStoreClient::Task<void> AsyncStoreClient::CancelWills() {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(*scope, MakeRequest(Command::kCancelWills));
}

AsyncStoreClient::Task<int64_t> AsyncStoreClient::ClearWorkerKeys() {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, MakeRequest(Command::kClearWorkerKeys));
  co_return reply.number;
}

// WAIT's reply is deferred until the keys exist. On the deadline the timer sends CANCEL_WAIT;
// the server then answers WAIT_CANCELED, or STOP_WAITING followed by WAIT_CANCELED when the keys
// arrived in between. A store that answers neither within operation_timeout is given up on.
AsyncStoreClient::Task<bool> AsyncStoreClient::Wait(std::vector<std::string> keys,
                                                    std::chrono::milliseconds timeout) {
  auto impl = impl_;
  auto scope = scope_;
  Request request = MakeRequest(Command::kWait, std::move(keys));
  if (impl->tagged) co_return co_await impl->TaggedWait(*scope, std::move(request), timeout);
  const std::string what = Describe(request);
  Impl::Turn turn(*impl, what.c_str());
  impl->RequireOpen(what);
  std::string bytes;
  EncodeRequest(impl->dialect(), request, &bytes);
  co_await impl->WriteAll(bytes, what);

  // The timer is armed only after the WAIT is written, so the CANCEL_WAIT write can never
  // overlap another write on the socket.
  auto cancel_sent = std::make_shared<bool>(false);
  if (timeout < kForever) {
    uint64_t mine = ++impl->generation;
    impl->timed_out = false;
    impl->timer.expires_after(timeout);
    impl->timer.async_wait([impl, mine, cancel_sent](error_code ec) {
      if (ec || mine != impl->generation || !impl->open) return;
      *cancel_sent = true;
      auto cancel = std::make_shared<std::string>();
      EncodeRequest(impl->dialect(), MakeRequest(Command::kCancelWait), cancel.get());
      // The handler owns the buffer until the write ends. Its error is ignored: a broken
      // connection fails the pending read, which the deadline below bounds.
      asio::async_write(impl->socket, asio::buffer(*cancel), [impl, cancel](error_code, size_t) {});
      impl->ArmDeadline(impl->options.operation_timeout);
    });
  }
  Reply reply = co_await impl->ReadReply(ReplyShape::kU8, 0, what);
  bool keys_ready = reply.u8 == kStopWaiting;
  if (keys_ready && *cancel_sent) {
    reply = co_await impl->ReadReply(ReplyShape::kU8, 0, what);  // the WAIT_CANCELED
  }
  impl->Disarm();
  impl->ThrowIfEnded(*scope, what);
  co_return keys_ready;
}

}  // namespace cpplaunch
