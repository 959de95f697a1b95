// The client's pacing against members that are busy, not gone (etcd_types.h, attempt_timeout):
// fake members on loopback that answer every request, but only after a delay longer than one
// attempt. No etcd needed; about 1 s. The fakes speak the gateway's HTTP/1.1: the pacing lives in
// Client::Impl::Call, above both transports, so the gateway's is the one tested here.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "base/asio_coroutine.h"
// Asio after asio_coroutine.h (see there).
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>

#include "etcd_client/etcd_client.h"
#include "tests/etcd_client/etcd_test_cluster.h"

namespace cpplaunch::etcd {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;
using testing::RunTask;

// A member that answers each range with an empty result `delay` after the request arrived,
// counting the requests it received.
class SlowMember {
 public:
  SlowMember(asio::io_context& io, std::chrono::milliseconds delay)
      : acceptor_(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), delay_(delay) {
    asio::co_spawn(io, Accept(), asio::detached);
  }
  Endpoint endpoint() const { return {"127.0.0.1", acceptor_.local_endpoint().port()}; }
  int requests() const { return *requests_; }

 private:
  asio::awaitable<void> Accept() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket =
          co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(acceptor_.get_executor(), Serve(std::move(socket), delay_, requests_),
                     asio::detached);
    }
  }

  static asio::awaitable<void> Serve(tcp::socket socket, std::chrono::milliseconds delay,
                                     std::shared_ptr<int> requests) {
    boost::system::error_code ec;
    asio::streambuf in;
    for (;;) {
      const size_t header = co_await asio::async_read_until(
          socket, in, "\r\n\r\n", asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      std::string head(asio::buffers_begin(in.data()), asio::buffers_begin(in.data()) + header);
      in.consume(header);
      const size_t length_at = head.find("Content-Length: ");
      const size_t length =
          length_at == std::string::npos ? 0 : std::stoul(head.substr(length_at + 16));
      if (in.size() < length) {
        co_await asio::async_read(socket, in, asio::transfer_exactly(length - in.size()),
                                  asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return;
      }
      in.consume(length);
      ++*requests;
      asio::steady_timer timer(socket.get_executor(), delay);
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      const std::string body = R"({"header":{"revision":"7"}})";
      const std::string answer =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
      co_await asio::async_write(socket, asio::buffer(answer),
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
    }
  }

  tcp::acceptor acceptor_;
  std::chrono::milliseconds delay_;
  std::shared_ptr<int> requests_ = std::make_shared<int>(0);
};

TEST_CASE("a lone busy member is asked once and waited for, not asked again per attempt",
          "[etcd_pacing]") {
  asio::io_context io;
  SlowMember member(io, 300ms);
  ClientSettings settings;
  settings.endpoints = {member.endpoint()};
  settings.transport = Transport::kGateway;
  settings.attempt_timeout = 100ms;
  settings.request_timeout = 2s;
  Client client(io.get_executor(), settings);
  CHECK(RunTask(io, client.Range("/k")).revision == 7);
  CHECK(member.requests() == 1);
}

TEST_CASE("busy members: each round of the endpoint list waits twice as long as the last",
          "[etcd_pacing]") {
  asio::io_context io;
  // Answers take 150 ms: a first round of 100 ms attempts gets none, the second (200 ms) does.
  SlowMember first(io, 150ms);
  SlowMember second(io, 150ms);
  ClientSettings settings;
  settings.endpoints = {first.endpoint(), second.endpoint()};
  settings.transport = Transport::kGateway;
  settings.attempt_timeout = 100ms;
  settings.request_timeout = 3s;
  Client client(io.get_executor(), settings);
  const auto started = std::chrono::steady_clock::now();
  CHECK(RunTask(io, client.Range("/k")).revision == 7);
  CHECK(first.requests() + second.requests() == 3);
  CHECK(std::chrono::steady_clock::now() - started < 1s);
}

}  // namespace
}  // namespace cpplaunch::etcd
