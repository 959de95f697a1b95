#include "etcd_client/http_connection.h"

#include <array>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "base/text.h"
#include "etcd_client/member_socket.h"
#include "etcd_client/tls_stream.h"

namespace cpplaunch::etcd {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr auto kUse = asio::use_awaitable;
// etcd's answers are small; a range over many keys stays far below this.
constexpr uint64_t kMaxBody = 256ull << 20;

using PlainStream = beast::tcp_stream;
using SecureStream = TlsStream;
using StreamParser = http::response_parser<http::buffer_body>;

}  // namespace

struct HttpConnection::Impl {
  Impl(asio::any_io_executor ex, Endpoint where, TlsContext* context)
      : executor(std::move(ex)), endpoint(std::move(where)), tls(context) {}

  asio::any_io_executor executor;
  Endpoint endpoint;
  TlsContext* tls;
  std::optional<PlainStream> plain;
  std::optional<SecureStream> secure;
  beast::flat_buffer buffer;
  std::optional<StreamParser> stream_parser;
  std::array<char, 16384> chunk{};
  bool open = false;
  bool closed = false;  // Close() was called
  bool used = false;

  beast::tcp_stream& Lowest() { return secure ? secure->next_layer() : *plain; }

  void Shut() {
    open = false;
    if (!plain && !secure) return;
    error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().close();
  }

  std::string Why(error_code ec, Clock::time_point started) {
    std::string why = closed ? "closed"
                      : ec == beast::error::timeout
                          ? "no answer within " + FormatTenths(Clock::now() - started)
                      : ec == http::error::end_of_stream || ec == asio::error::eof
                          ? "the member closed the connection"
                      : ec == TlsFailure() && secure ? secure->error()
                                                     : ec.message();
    Shut();
    return why;
  }

  http::request<http::string_body> MakeRequest(const std::string& target, std::string body) const {
    http::request<http::string_body> request{http::verb::post, target, 11};
    request.set(http::field::host, endpoint.ToString());
    request.set(http::field::content_type, "application/json");
    request.keep_alive(true);
    request.body() = std::move(body);
    request.prepare_payload();
    return request;
  }

  // The stream-type-specific steps; each reports through `ec`.
  template <class Stream>
  asio::awaitable<void> Write(Stream& stream, http::request<http::string_body>& request,
                              error_code& ec) {
    co_await http::async_write(stream, request, asio::redirect_error(kUse, ec));
  }
  template <class Parser>
  asio::awaitable<void> Read(Parser& parser, error_code& ec) {
    if (secure) {
      co_await http::async_read(*secure, buffer, parser, asio::redirect_error(kUse, ec));
    } else {
      co_await http::async_read(*plain, buffer, parser, asio::redirect_error(kUse, ec));
    }
  }
  asio::awaitable<void> Send(http::request<http::string_body>& request, error_code& ec) {
    if (secure) {
      co_await Write(*secure, request, ec);
    } else {
      co_await Write(*plain, request, ec);
    }
  }
  asio::awaitable<void> ReadHeader(error_code& ec) {
    if (secure) {
      co_await http::async_read_header(*secure, buffer, *stream_parser,
                                       asio::redirect_error(kUse, ec));
    } else {
      co_await http::async_read_header(*plain, buffer, *stream_parser,
                                       asio::redirect_error(kUse, ec));
    }
  }
  asio::awaitable<void> ReadSome(error_code& ec) {
    if (secure) {
      co_await http::async_read_some(*secure, buffer, *stream_parser,
                                     asio::redirect_error(kUse, ec));
    } else {
      co_await http::async_read_some(*plain, buffer, *stream_parser,
                                     asio::redirect_error(kUse, ec));
    }
  }

  asio::awaitable<std::string> Handshake(Clock::time_point started) {
    error_code ec;
    co_await secure->async_handshake(asio::redirect_error(kUse, ec));
    if (ec) co_return "TLS handshake: " + Why(ec, started);
    co_return "";
  }

  // One piece of the streamed body into *out: "" or why not.
  asio::awaitable<std::string> ReadPiece(std::string* out, Clock::time_point started) {
    if (!open) co_return closed ? "closed" : "not connected";
    if (stream_parser->is_done()) co_return "the member ended the stream";
    auto& body = stream_parser->get().body();
    body.data = chunk.data();
    body.size = chunk.size();
    error_code ec;
    co_await ReadSome(ec);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) co_return Why(ec, started);
    out->append(chunk.data(), chunk.size() - body.size);
    co_return "";
  }
};

HttpConnection::HttpConnection(asio::any_io_executor executor, Endpoint endpoint, TlsContext* tls)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(endpoint), tls)) {}

HttpConnection::~HttpConnection() { Close(); }

const Endpoint& HttpConnection::endpoint() const { return impl_->endpoint; }
bool HttpConnection::is_open() const { return impl_->open; }
bool HttpConnection::reused() const { return impl_->used; }

asio::awaitable<std::string> HttpConnection::Connect(Clock::time_point deadline) {
  auto self = impl_;  // Close() and destruction while suspended leave this frame valid
  Clock::time_point started = Clock::now();
  if (self->closed) co_return "closed";
  std::string unresolved;
  auto results = co_await ResolveMember(self->executor, self->endpoint, &unresolved);
  if (!unresolved.empty()) co_return unresolved;
  if (self->closed) co_return "closed";
  self->buffer.clear();
  self->stream_parser.reset();
  self->plain.reset();
  self->secure.reset();
  if (self->tls) {
    TlsStep error;
    std::unique_ptr<TlsSession> session(self->tls->NewSession(self->endpoint.host.c_str(), &error));
    if (!session) co_return std::string("TLS: ") + error.error;
    self->secure.emplace(self->executor, std::move(session));
  } else {
    self->plain.emplace(self->executor);
  }
  self->Lowest().expires_at(deadline);
  error_code ec;
  co_await self->Lowest().async_connect(results, asio::redirect_error(kUse, ec));
  if (ec) co_return self->Why(ec, started);
  PrepareMemberSocket(self->Lowest().socket());
  if (self->tls) {
    std::string why = co_await self->Handshake(started);
    if (!why.empty()) co_return why;
  }
  self->Lowest().expires_never();
  self->open = true;
  self->used = false;
  co_return "";
}

asio::awaitable<HttpConnection::Answer> HttpConnection::Post(std::string target, std::string body,
                                                             Clock::time_point deadline) {
  auto self = impl_;
  Clock::time_point started = Clock::now();
  if (!self->open) co_return Answer{self->closed ? "closed" : "not connected", 0, {}};
  self->used = true;
  self->Lowest().expires_at(deadline);
  auto request = self->MakeRequest(target, std::move(body));
  error_code ec;
  co_await self->Send(request, ec);
  if (ec) co_return Answer{self->Why(ec, started), 0, {}};
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBody);
  co_await self->Read(parser, ec);
  if (ec) co_return Answer{self->Why(ec, started), 0, {}};
  Answer answer{"", static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
  if (parser.get().keep_alive()) {
    self->Lowest().expires_never();
  } else {
    self->Shut();
  }
  co_return answer;
}

asio::awaitable<HttpConnection::Answer> HttpConnection::OpenStream(std::string target,
                                                                   std::string body,
                                                                   Clock::time_point deadline) {
  auto self = impl_;
  Clock::time_point started = Clock::now();
  if (!self->open) co_return Answer{self->closed ? "closed" : "not connected", 0, {}};
  self->used = true;
  ProbeSilentMember(self->Lowest().socket());
  self->Lowest().expires_at(deadline);
  auto request = self->MakeRequest(target, std::move(body));
  error_code ec;
  co_await self->Send(request, ec);
  if (ec) co_return Answer{self->Why(ec, started), 0, {}};
  self->stream_parser.emplace();
  self->stream_parser->body_limit(boost::none);
  co_await self->ReadHeader(ec);
  if (ec) co_return Answer{self->Why(ec, started), 0, {}};
  Answer answer{"", static_cast<int>(self->stream_parser->get().result_int()), {}};
  if (answer.status == 200) {
    self->Lowest().expires_never();
    co_return answer;
  }
  // An error answer is short: read it whole, still under the deadline.
  while (!self->stream_parser->is_done() && answer.body.size() < kMaxBody) {
    std::string why = co_await self->ReadPiece(&answer.body, started);
    if (!why.empty()) break;
  }
  self->Shut();
  co_return answer;
}

asio::awaitable<std::string> HttpConnection::ReadStream(std::string* out) {
  auto self = impl_;
  co_return co_await self->ReadPiece(out, Clock::now());
}

void HttpConnection::Close() {
  impl_->closed = true;
  impl_->Shut();
}

}  // namespace cpplaunch::etcd
