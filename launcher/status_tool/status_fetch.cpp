#include "launcher/status_tool/status_fetch.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>

#include "base/crypto/status_proof.h"

namespace cpplaunch::status {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr auto kUse = asio::use_awaitable;
// A host's answer lists its ranks and a few peers: far below this even with hundreds of ranks;
// the bound keeps a stranger on the port from filling the tool's memory.
constexpr uint64_t kMaxBody = 16ull << 20;

std::string Why(error_code ec, Clock::time_point started) {
  if (ec == beast::error::timeout) {
    char text[48];
    std::snprintf(text, sizeof text, "no answer within %.1f s",
                  std::chrono::duration<double>(Clock::now() - started).count());
    return text;
  }
  if (ec == http::error::end_of_stream || ec == asio::error::eof) {
    return "the connection closed before an answer";
  }
  return ec.message();
}

http::request<http::empty_body> MakeRequest(const StatusAddress& address, const std::string& path,
                                            const std::string& proof) {
  http::request<http::empty_body> request{http::verb::get, path, 11};
  bool v6 = address.host.find(':') != std::string::npos;
  request.set(http::field::host,
              (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port));
  request.set(http::field::user_agent, "cpplaunch-status");
  request.keep_alive(false);
  if (!proof.empty()) request.set(std::string(kStatusProofHeader), proof);
  return request;
}

}  // namespace

asio::awaitable<FetchResult> FetchStatus(StatusAddress address, std::string path, std::string proof,
                                         Clock::time_point deadline) {
  Clock::time_point started = Clock::now();
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  error_code ec;
  auto results = co_await resolver.async_resolve(address.host, std::to_string(address.port),
                                                 asio::redirect_error(kUse, ec));
  if (ec) co_return FetchResult{"cannot resolve '" + address.host + "': " + ec.message(), 0, {}};
  beast::tcp_stream stream(executor);
  stream.expires_at(deadline);
  co_await stream.async_connect(results, asio::redirect_error(kUse, ec));
  if (ec) co_return FetchResult{Why(ec, started), 0, {}};
  auto request = MakeRequest(address, path, proof);
  co_await http::async_write(stream, request, asio::redirect_error(kUse, ec));
  if (ec) co_return FetchResult{Why(ec, started), 0, {}};
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBody);
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(kUse, ec));
  if (ec) co_return FetchResult{Why(ec, started), 0, {}};
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  co_return FetchResult{"", static_cast<int>(parser.get().result_int()),
                        std::move(parser.get().body())};
}

}  // namespace cpplaunch::status
