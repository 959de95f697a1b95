#include "rendezvous/store/client/store_connection.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <stdexcept>

#include "base/text.h"
#include "rendezvous/store/agent_handshake.h"

namespace cpplaunch {
namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

// Enough of a peer's first answer to name it in one line.
constexpr std::size_t kHeardBytes = 200;

}  // namespace

std::string StoreConnection::Describe(const Request& request) {
  std::string text = CommandName(request.command);
  if (!request.keys.empty()) {
    text += " '" + request.keys.front() + "'";
    if (request.keys.size() > 1) text += " (+" + std::to_string(request.keys.size() - 1) + " keys)";
  }
  return text;
}

Request StoreConnection::MakeRequest(Command command, std::vector<std::string> keys,
                                     std::vector<Bytes> values) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  return request;
}

StoreConnection::Turn::Turn(StoreConnection& connection, const char* what)
    : connection_(connection) {
  if (connection.busy) {
    throw std::logic_error(std::string("AsyncStoreClient: ") + what +
                           " while another operation is pending");
  }
  connection.busy = true;
}

void StoreConnection::CloseWith(std::string reason) {
  if (open) closed_reason = std::move(reason);
  open = false;
  error_code ignored;
  socket.cancel(ignored);
  socket.close(ignored);
  timer.cancel();
  FailCalls();
}

void StoreConnection::FailCalls() {
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

uint32_t StoreConnection::NewTag() {
  while (next_tag == 0 || calls.count(next_tag) != 0 || tagged_decoder.expecting(next_tag)) {
    ++next_tag;
  }
  return next_tag++;
}

void StoreConnection::Send(std::string_view bytes, std::shared_ptr<Call> written) {
  outbox.append(bytes);
  if (written) outbox_calls.push_back(std::move(written));
  PumpWrite();
}

void StoreConnection::PumpWrite() {
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

void StoreConnection::StartReading() {
  socket.async_read_some(asio::buffer(read_buffer),
                         [self = shared_from_this()](error_code ec, size_t n) {
                           if (ec) return self->Broken(ec);
                           self->input.append(self->read_buffer.data(), n);
                           if (self->DecodeReplies()) self->StartReading();
                         });
}

void StoreConnection::Broken(error_code ec) {
  if (!open) return;
  CloseWith(ec == asio::error::eof ? "the store closed the connection" : ec.message());
}

// Hands every complete reply to its call; false when the connection was closed.
bool StoreConnection::DecodeReplies() {
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
std::shared_ptr<StoreConnection::Call> StoreConnection::Issue(const StoreClientScope& scope,
                                                              const Request& request,
                                                              uint64_t count,
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
StoreConnection::Task<bool> StoreConnection::Await(std::shared_ptr<Call> call,
                                                   Clock::duration limit) {
  if (call->done) co_return true;
  call->signal.expires_after(limit);
  error_code ec;
  co_await call->signal.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return call->done;
}

bool StoreConnection::Ended(const StoreClientScope& scope) const {
  return scope.closed || cancelled;
}

void StoreConnection::ThrowIfEnded(const StoreClientScope& scope, const std::string& what) const {
  if (Ended(scope)) throw StoreError(what + " failed on the store at " + peer + ": closed");
}

// The call's reply, or its error thrown.
Reply StoreConnection::Outcome(const StoreClientScope& scope, Call& call, const std::string& what) {
  if (!call.error.empty()) {
    throw StoreError(what + " failed on the store at " + peer + ": " + call.error);
  }
  ThrowIfEnded(scope, what);
  return std::move(call.reply);
}

// Gives up on a call that got no answer in time: the owner's connection closes (as an
// untagged one would); a view's call is forgotten, its late reply dropped.
void StoreConnection::TimedOut(const StoreClientScope& scope, Call& call, const std::string& what,
                               std::chrono::milliseconds limit) {
  std::string message =
      what + ": no answer from the store at " + peer + " within " + FormatTenths(limit);
  if (scope.owner) {
    CloseWith(message);
  } else {
    calls.erase(call.tag);
    call.Finish(message);
  }
  throw StoreTimeout(message);
}

StoreConnection::Task<Reply> StoreConnection::TaggedRoundTrip(const StoreClientScope& scope,
                                                              Request request, uint64_t count) {
  auto self = shared_from_this();
  const std::string what = Describe(request);
  const auto sent = Clock::now();
  auto call = Issue(scope, request, count, what);
  if (!co_await Await(call, scope.timeout)) TimedOut(scope, *call, what, scope.timeout);
  Reply reply = Outcome(scope, *call, what);
  Traced(what, sent);
  co_return reply;
}

// A WAIT of its own on the shared connection; its timeout cancels only this wait (tagged
// CANCEL_WAIT), whose reply then comes as WAIT_CANCELED, or STOP_WAITING if the keys won.
StoreConnection::Task<bool> StoreConnection::TaggedWait(const StoreClientScope& scope,
                                                        Request request,
                                                        std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  const std::string what = Describe(request);
  const auto sent = Clock::now();
  auto call = Issue(scope, request, 0, what);
  const bool forever = timeout >= kForever;
  if (!co_await Await(call, forever ? Clock::duration::max() / 2 : Clock::duration(timeout))) {
    SendCancelWait(call->tag);
    if (!co_await Await(call, scope.timeout)) TimedOut(scope, *call, what, scope.timeout);
  }
  const bool stopped = Outcome(scope, *call, what).u8 == kStopWaiting;
  Traced(what, sent);
  co_return stopped;
}

void StoreConnection::Traced(const std::string& what, Clock::time_point sent) const {
  if (!options.trace) return;
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - sent).count();
  options.trace("store: " + what + " answered in " + std::to_string(micros) + " us");
}

// Tells the store to cancel the WAIT sent as `wait_tag`; CANCEL_WAIT's own reply is dropped.
void StoreConnection::SendCancelWait(uint32_t wait_tag) {
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
void StoreConnection::EndScope(uint64_t scope) {
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
void StoreConnection::ArmDeadline(Clock::duration after) {
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
void StoreConnection::Disarm() {
  ++generation;
  timer.cancel();
}

void StoreConnection::Fail(const std::string& what, error_code ec) {
  if (timed_out) {
    std::string message = what + ": no answer from the store at " + peer + " within " +
                          FormatTenths(options.operation_timeout);
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

void StoreConnection::RequireOpen(const std::string& what) {
  if (!open) throw StoreError(what + " failed on the store at " + peer + ": " + closed_reason);
}

StoreConnection::Task<void> StoreConnection::WriteAll(const std::string& bytes,
                                                      const std::string& what) {
  error_code ec;
  co_await asio::async_write(socket, asio::buffer(bytes),
                             asio::redirect_error(asio::use_awaitable, ec));
  if (ec) Fail(what, ec);
}

StoreConnection::Task<Reply> StoreConnection::ReadReply(ReplyShape shape, uint64_t count,
                                                        const std::string& what) {
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

// Sends one request and reads its reply under the operation timeout.
StoreConnection::Task<Reply> StoreConnection::RoundTrip(const StoreClientScope& scope,
                                                        Request request, uint64_t count) {
  if (tagged) co_return co_await TaggedRoundTrip(scope, std::move(request), count);
  std::string what = Describe(request);
  Turn turn(*this, what.c_str());
  std::string bytes;
  if (!EncodeRequest(dialect(), request, &bytes)) {
    throw StoreError(what + ": only an agent connection (AsyncStoreClient::Options::agent) " +
                     "can send this");
  }
  RequireOpen(what);
  const auto sent = Clock::now();
  ArmDeadline(options.operation_timeout);
  co_await WriteAll(bytes, what);
  Reply reply = co_await ReadReply(ReplyShapeOf(request.command), count, what);
  Disarm();
  ThrowIfEnded(scope, what);
  Traced(what, sent);
  co_return reply;
}

// One TCP connection attempt to one address, bounded by `limit`. Returns "" or the reason.
StoreConnection::Task<std::string> StoreConnection::TryConnect(const tcp::endpoint& endpoint,
                                                               Clock::duration limit) {
  // async_connect opens a closed socket for the endpoint's family, so closing the previous
  // attempt lets IPv4 and IPv6 addresses follow each other.
  error_code ignored;
  socket.close(ignored);
  ArmDeadline(limit);
  error_code ec;
  co_await socket.async_connect(endpoint, asio::redirect_error(asio::use_awaitable, ec));
  Disarm();
  if (timed_out)
    co_return "no answer to the connection request within " + FormatTenths(limit) +
        " (host down, or a firewall dropping packets?)";
  if (ec) co_return ec.message();
  socket.set_option(tcp::no_delay(true), ignored);
  co_return "";
}

// VALIDATE + PING: proves the peer is a TCPStore speaking the modern dialect.
StoreConnection::Task<void> StoreConnection::Handshake() {
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

// AGENT_HELLO with this agent's nonce; the store's nonce and proof, checked before anything else
// is sent or trusted; AGENT_PROOF + PING, the verdict and the echo (agent_handshake.h).
StoreConnection::Task<void> StoreConnection::AgentHandshake() {
  const std::string what = "agent handshake";
  Request hello = MakeRequest(Command::kAgentHello, {}, {NewAgentNonce()});
  hello.u32 = kAgentHelloMagic;
  const std::string agent_nonce = hello.values.front();
  std::string bytes;
  EncodeRequest(Dialect::kAgent, hello, &bytes);
  ArmDeadline(options.operation_timeout);
  co_await WriteAll(bytes, what);
  Reply challenge = co_await ReadReply(ReplyShape::kBytes, 0, what);
  const Bytes& answer = challenge.values.at(0);
  if (answer.size() != 2 * kAgentNonceBytes) {
    CloseWith("not a cpplaunch store");
    throw StoreError("the service at " + peer + " answered the agent handshake wrongly: is it " +
                     "a cpplaunch store of this version?");
  }
  const std::string nonce = answer.substr(0, kAgentNonceBytes);
  bytes.clear();
  if (!StoreProofValid(options.secret, agent_nonce, nonce, answer.substr(kAgentNonceBytes))) {
    // An empty proof tells a real store with another secret why this agent leaves (it logs the
    // refusal); it tells an impostor nothing.
    Request empty = MakeRequest(Command::kAgentProof, {}, {Bytes()});
    EncodeRequest(Dialect::kAgent, empty, &bytes);
    try {
      co_await WriteAll(bytes, what);
    } catch (const StoreError&) {
      // A courtesy to a real store with another secret; the refusal below is what counts.
    }
    CloseWith("the store did not prove the secret");
    throw StoreHandshakeFailed("the store at " + peer +
                                   " did not prove this job's secret: its secret_file differs "
                                   "from this host's, or another process holds the port (see "
                                   "docs/security.md)",
                               "", true);
  }
  Request proof = MakeRequest(Command::kAgentProof, {}, {AgentProof(options.secret, nonce)});
  Request ping = MakeRequest(Command::kPing);
  ping.u32 = static_cast<uint32_t>(::getpid());
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

void StoreConnection::CheckEcho(const Reply& reply, const Request& ping) {
  if (reply.u32 != ping.u32) {
    CloseWith("not a TCPStore");
    throw StoreError("the service at " + peer +
                     " answered the store handshake wrongly: is it a cpplaunch or PyTorch "
                     "(>= 2.5) TCPStore?");
  }
}

}  // namespace cpplaunch
