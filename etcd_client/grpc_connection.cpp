#include "etcd_client/grpc_connection.h"

#include <nghttp2/nghttp2.h>

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <charconv>
#include <map>
#include <optional>

#include "base/text.h"
#include "etcd_client/member_socket.h"

namespace cpplaunch::etcd {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr auto kUse = asio::use_awaitable;
// What the member may send ahead of our reading: a large range in one go, per call and in all.
constexpr int32_t kStreamWindow = 4 << 20;
constexpr int32_t kConnectionWindow = 16 << 20;
// gRPC's message prefix: a compressed flag and a 4-byte big-endian length.
constexpr size_t kPrefix = 5;

std::string Framed(const std::string& message) {
  std::string framed(kPrefix, '\0');
  auto length = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) framed[1 + i] = static_cast<char>(length >> (24 - 8 * i));
  return framed + message;
}

// grpc-message is percent-encoded (gRPC's HTTP/2 mapping); a '%' not followed by two hex digits
// stays as it is.
std::string PercentDecoded(std::string_view text) {
  std::string decoded;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char value = 0;
    const char* digits = text.data() + i + 1;
    if (text[i] == '%' && i + 2 < text.size() &&
        std::from_chars(digits, digits + 2, value, 16).ptr == digits + 2) {
      decoded += static_cast<char>(value);
      i += 2;
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

GrpcConnection::Answer Failed(std::string why) {
  GrpcConnection::Answer answer;
  answer.error = std::move(why);
  return answer;
}

nghttp2_nv Header(std::string_view name, std::string_view value) {
  // Borrowed: nghttp2_submit_request copies the names and values it is given.
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

// One call: what is sent, what came back, and the timer its coroutine waits on.
struct CallState {
  explicit CallState(const asio::any_io_executor& executor) : wake(executor) {}
  std::string request;  // framed
  size_t sent = 0;
  std::string pending;  // bytes of a message not yet whole
  std::vector<std::string> messages;
  bool headers = false;
  bool closed = false;
  bool cancelled = false;   // by CancelStream or a missed deadline
  uint32_t reset_code = 0;  // the stream's RST_STREAM code, 0 when it ended normally
  int http_status = 0;
  int status = -1;  // grpc-status; -1: none came
  std::string message;
  bool malformed = false;  // a compressed message, which we never asked for
  asio::steady_timer wake;

  void Wake() { wake.cancel(); }
};

struct GrpcConnection::Impl {
  Impl(asio::any_io_executor ex, Endpoint where)
      : executor(std::move(ex)), endpoint(std::move(where)) {}
  ~Impl() {
    if (session) nghttp2_session_del(session);
  }

  asio::any_io_executor executor;
  Endpoint endpoint;
  std::optional<beast::tcp_stream> socket;
  nghttp2_session* session = nullptr;
  std::map<int32_t, std::shared_ptr<CallState>> calls;
  std::string failure;  // why the connection broke ("" while it works)
  bool open = false;
  bool goaway = false;
  bool closed = false;  // Close() was called
  bool writing = false;
  uint64_t frames_read = 0;
  std::array<uint8_t, 16384> buffer{};

  // Ends the connection and every call on it with `why`.
  void Fail(std::string why) {
    if (failure.empty()) failure = closed ? "closed" : std::move(why);
    open = false;
    if (socket) {
      error_code ignored;
      socket->socket().shutdown(tcp::socket::shutdown_both, ignored);
      socket->close();
    }
    // The calls stay in the map: nghttp2 holds pointers to them until the session is deleted.
    for (auto& [id, call] : calls) {
      call->closed = true;
      call->Wake();
    }
  }

  std::string Why(error_code ec) const {
    if (closed) return "closed";
    if (ec == asio::error::eof) return "the member closed the connection";
    return ec.message();
  }

  // Sends what nghttp2 has queued, from one writer at a time.
  void Flush(const std::shared_ptr<Impl>& self) {
    if (writing || !open) return;
    writing = true;
    asio::co_spawn(executor, Write(self), asio::detached);
  }

  static asio::awaitable<void> Write(std::shared_ptr<Impl> self) {
    std::string out;
    while (self->open) {
      const uint8_t* data = nullptr;
      ssize_t length;
      while ((length = nghttp2_session_mem_send(self->session, &data)) > 0) {
        out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(length));
      }
      if (length < 0) {
        self->Fail(std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(length)));
        break;
      }
      if (out.empty()) break;
      error_code ec;
      co_await asio::async_write(self->socket->socket(), asio::buffer(out),
                                 asio::redirect_error(kUse, ec));
      if (ec) {
        self->Fail(self->Why(ec));
        break;
      }
      out.clear();
    }
    self->writing = false;
  }

  static asio::awaitable<void> Read(std::shared_ptr<Impl> self) {
    while (self->open) {
      error_code ec;
      size_t got = co_await self->socket->socket().async_read_some(asio::buffer(self->buffer),
                                                                   asio::redirect_error(kUse, ec));
      if (!self->open) break;
      if (ec) {
        self->Fail(self->Why(ec));
        break;
      }
      ++self->frames_read;
      ssize_t used = nghttp2_session_mem_recv(self->session, self->buffer.data(), got);
      if (used < 0) {
        self->Fail(std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(used)));
        break;
      }
      self->Flush(self);
      if (nghttp2_session_want_read(self->session) == 0 &&
          nghttp2_session_want_write(self->session) == 0) {
        self->Fail("the member closed the connection");
      }
    }
  }

  static CallState* StateOf(nghttp2_session* session, int32_t stream) {
    return static_cast<CallState*>(nghttp2_session_get_stream_user_data(session, stream));
  }

  static int OnHeader(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_length, const uint8_t* value, size_t value_length,
                      uint8_t /*flags*/, void* /*user*/) {
    CallState* call = StateOf(session, frame->hd.stream_id);
    if (call == nullptr) return 0;
    std::string_view key(reinterpret_cast<const char*>(name), name_length);
    std::string_view text(reinterpret_cast<const char*>(value), value_length);
    if (key == ":status") {
      call->http_status = std::atoi(std::string(text).c_str());
    } else if (key == "grpc-status") {
      call->status = std::atoi(std::string(text).c_str());
    } else if (key == "grpc-message") {
      call->message = PercentDecoded(text);
    }
    return 0;
  }

  static int OnFrame(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    auto* self = static_cast<Impl*>(user);
    if (frame->hd.type == NGHTTP2_GOAWAY) self->goaway = true;
    if (frame->hd.type == NGHTTP2_HEADERS) {
      if (CallState* call = StateOf(session, frame->hd.stream_id)) {
        call->headers = true;
        call->Wake();
      }
    }
    return 0;
  }

  static int OnData(nghttp2_session* session, uint8_t /*flags*/, int32_t stream,
                    const uint8_t* data, size_t length, void* /*user*/) {
    CallState* call = StateOf(session, stream);
    if (call == nullptr) return 0;
    call->pending.append(reinterpret_cast<const char*>(data), length);
    while (call->pending.size() >= kPrefix) {
      uint32_t size = 0;
      for (int i = 1; i <= 4; ++i) size = (size << 8) | static_cast<uint8_t>(call->pending[i]);
      if (call->pending.size() < kPrefix + size) break;
      if (call->pending[0] != 0) call->malformed = true;
      call->messages.push_back(call->pending.substr(kPrefix, size));
      call->pending.erase(0, kPrefix + size);
    }
    call->Wake();
    return 0;
  }

  static int OnClose(nghttp2_session* /*session*/, int32_t stream, uint32_t code, void* user) {
    auto* self = static_cast<Impl*>(user);
    auto it = self->calls.find(stream);
    if (it == self->calls.end()) return 0;
    it->second->closed = true;
    it->second->reset_code = code;
    it->second->Wake();
    // The stream is gone from nghttp2: its state may go once its coroutine lets it go.
    self->calls.erase(it);
    return 0;
  }

  static ssize_t ReadBody(nghttp2_session* /*session*/, int32_t /*stream*/, uint8_t* out,
                          size_t length, uint32_t* flags, nghttp2_data_source* source,
                          void* /*user*/) {
    auto* call = static_cast<CallState*>(source->ptr);
    size_t count = std::min(length, call->request.size() - call->sent);
    std::copy_n(call->request.data() + call->sent, count, out);
    call->sent += count;
    if (call->sent == call->request.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(count);
  }

  std::string Start() {
    nghttp2_session_callbacks* callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&callbacks) != 0) return "HTTP/2: out of memory";
    nghttp2_session_callbacks_set_on_header_callback(callbacks, OnHeader);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, OnFrame);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, OnData);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, OnClose);
    int rv = nghttp2_session_client_new(&session, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
    if (rv != 0) return std::string("HTTP/2: ") + nghttp2_strerror(rv);
    std::array<nghttp2_settings_entry, 2> settings{{
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
    }};
    nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
    nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
    return "";
  }

  // Submits a call, its stream in *id; nullptr (and `why`) when the connection cannot take one.
  std::shared_ptr<CallState> Submit(const std::shared_ptr<Impl>& self, const std::string& path,
                                    const std::string& message, int32_t* id, std::string* why) {
    if (!open || goaway) {
      *why = !failure.empty() ? failure : goaway ? "the member takes no new calls" : "closed";
      return nullptr;
    }
    auto call = std::make_shared<CallState>(executor);
    call->request = Framed(message);
    std::string authority = endpoint.ToString();
    std::array<nghttp2_nv, 6> headers{
        Header(":method", "POST"),
        Header(":scheme", "http"),
        Header(":path", path),
        Header(":authority", authority),
        Header("content-type", "application/grpc"),
        Header("te", "trailers"),
    };
    nghttp2_data_provider body{};
    body.source.ptr = call.get();
    body.read_callback = ReadBody;
    *id =
        nghttp2_submit_request(session, nullptr, headers.data(), headers.size(), &body, call.get());
    if (*id < 0) {
      *why = std::string("HTTP/2: ") + nghttp2_strerror(*id);
      return nullptr;
    }
    calls[*id] = call;
    Flush(self);
    return call;
  }

  // Waits until `done` holds for the call, or `deadline`; false on the deadline.
  template <class Done>
  static asio::awaitable<bool> Await(CallState& call, Clock::time_point deadline, Done done) {
    while (!done()) {
      if (Clock::now() >= deadline) co_return false;
      call.wake.expires_at(deadline);
      error_code ignored;
      co_await call.wake.async_wait(asio::redirect_error(kUse, ignored));
    }
    co_return true;
  }

  // Resets the stream; its state stays in `calls` until nghttp2 has closed it (OnClose).
  void Cancel(const std::shared_ptr<Impl>& self, int32_t stream) {
    auto it = calls.find(stream);
    if (!open || it == calls.end() || it->second->cancelled) return;
    it->second->cancelled = true;
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
    Flush(self);
  }

  // The answer of a call that ended.
  Answer Ended(const CallState& call) const {
    Answer answer;
    if (call.status >= 0) {
      answer.status = call.status;
      answer.message = call.message;
      if (call.malformed) answer.error = "a compressed gRPC message, which was not asked for";
    } else if (call.reset_code != 0) {
      answer.error =
          "the member reset the call (HTTP/2 error " + std::to_string(call.reset_code) + ")";
    } else if (call.http_status != 0 && call.http_status != 200) {
      answer.error = "HTTP " + std::to_string(call.http_status) + " without a gRPC status";
    } else {
      answer.error = failure.empty() ? "the member ended the call without a status" : failure;
    }
    if (!call.messages.empty()) answer.body = call.messages.front();
    return answer;
  }
};

GrpcConnection::GrpcConnection(asio::any_io_executor executor, Endpoint endpoint)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(endpoint))) {}

GrpcConnection::~GrpcConnection() { Close(); }

const Endpoint& GrpcConnection::endpoint() const { return impl_->endpoint; }
bool GrpcConnection::is_open() const { return impl_->open && !impl_->goaway; }

asio::awaitable<std::string> GrpcConnection::Connect(Clock::time_point deadline) {
  auto self = impl_;  // Close() and destruction while suspended leave this frame valid
  Clock::time_point started = Clock::now();
  if (self->closed) co_return "closed";
  std::string unresolved;
  auto results = co_await ResolveMember(self->executor, self->endpoint, &unresolved);
  if (!unresolved.empty()) co_return unresolved;
  if (self->closed) co_return "closed";
  self->socket.emplace(self->executor);
  self->socket->expires_at(deadline);
  error_code ec;
  co_await self->socket->async_connect(results, asio::redirect_error(kUse, ec));
  if (self->closed) co_return "closed";
  if (ec) {
    self->socket->close();
    co_return ec == beast::error::timeout
        ? "no answer within " + FormatTenths(Clock::now() - started)
        : ec.message();
  }
  self->socket->expires_never();
  PrepareMemberSocket(self->socket->socket());
  // It carries the watch, silent while nothing changes.
  ProbeSilentMember(self->socket->socket());
  if (std::string why = self->Start(); !why.empty()) {
    self->socket->close();
    co_return why;
  }
  self->open = true;
  asio::co_spawn(self->executor, Impl::Read(self), asio::detached);
  self->Flush(self);
  co_return "";
}

asio::awaitable<GrpcConnection::Answer> GrpcConnection::Call(std::string path, std::string message,
                                                             Clock::time_point deadline) {
  auto self = impl_;
  const Clock::time_point started = Clock::now();
  const uint64_t frames_before = self->frames_read;
  std::string why;
  int32_t id = 0;
  auto call = self->Submit(self, path, message, &id, &why);
  if (!call) co_return Failed(why);
  if (!co_await Impl::Await(*call, deadline, [&] { return call->closed; })) {
    std::string late = "no answer within " + FormatTenths(Clock::now() - started);
    // Nothing at all from the member meanwhile, and no other call (a watch) that a new connection
    // would have to reopen: it is gone or stuck, and the next call connects again. Otherwise
    // only this call ends; a vanished host is noticed by the keep-alive probes.
    if (self->frames_read == frames_before && self->calls.size() == 1) {
      self->Fail(late);
    } else {
      self->Cancel(self, id);
    }
    co_return Failed(late);
  }
  co_return self->Ended(*call);
}

asio::awaitable<GrpcConnection::Answer> GrpcConnection::OpenStream(std::string path,
                                                                   std::string message,
                                                                   Clock::time_point deadline) {
  auto self = impl_;
  const Clock::time_point started = Clock::now();
  std::string why;
  int32_t id = 0;
  auto call = self->Submit(self, path, message, &id, &why);
  if (!call) co_return Failed(why);
  if (!co_await Impl::Await(*call, deadline, [&] { return call->headers || call->closed; })) {
    self->Cancel(self, id);
    co_return Failed("no answer within " + FormatTenths(Clock::now() - started));
  }
  if (call->closed) co_return self->Ended(*call);
  Answer answer;
  answer.stream = id;
  co_return answer;
}

asio::awaitable<std::string> GrpcConnection::ReadStream(int32_t stream,
                                                        std::vector<std::string>* out) {
  auto self = impl_;
  auto it = self->calls.find(stream);
  if (it == self->calls.end()) {
    co_return self->failure.empty() ? "the member ended the stream" : self->failure;
  }
  auto call = it->second;
  co_await Impl::Await(*call, Clock::time_point::max(),
                       [&] { return !call->messages.empty() || call->closed || call->cancelled; });
  if (call->cancelled) co_return "cancelled";
  for (auto& message : call->messages) out->push_back(std::move(message));
  call->messages.clear();
  if (!out->empty() || !call->closed) co_return "";
  if (!self->failure.empty()) co_return self->failure;
  if (call->status > 0) {
    co_return "the member ended the stream: " +
        (call->message.empty() ? "gRPC status " + std::to_string(call->status) : call->message);
  }
  co_return "the member ended the stream";
}

void GrpcConnection::CancelStream(int32_t stream) {
  auto it = impl_->calls.find(stream);
  if (it == impl_->calls.end()) return;
  auto call = it->second;
  impl_->Cancel(impl_, stream);
  call->Wake();
}

void GrpcConnection::Close() {
  impl_->closed = true;
  impl_->Fail("closed");
}

}  // namespace cpplaunch::etcd
