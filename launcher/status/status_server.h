#pragma once
// The HTTP/1.1 server of the agent's status endpoint (docs/status.md), with Boost.Beast on the
// agent's loop: no thread, no timer and no wake-up while nobody asks.
//
// Bounded, so that a client cannot touch supervision (a slowloris, a flood, a huge request):
//   * at most kMaxConnections open at once; one more is closed at accept;
//   * a request's head at most kMaxRequestBytes, and no body;
//   * kRequestDeadline for the whole exchange (read the request, write the answer);
//   * one request per connection (the answer says Connection: close).
// Only GET and HEAD are answered (405 for the rest).
//
// Threads: the io_context's thread, for every method and for the handler.
// Lifetime: Stop() (or the destructor) closes the acceptor and every connection at once.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace cpplaunch {

class StatusServer {
 public:
  static constexpr std::size_t kMaxConnections = 16;
  static constexpr std::size_t kMaxRequestBytes = std::size_t{8} << 10;
  static constexpr std::chrono::seconds kRequestDeadline{5};

  struct Request {
    std::string_view target;  // "/status"
    std::string_view proof;   // the X-Cpplaunch-Proof header ("" = none)
  };
  struct Response {
    unsigned status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  using Handler = std::function<Response(const Request&)>;

  // Binds `address`:`port` (0: a free port) and accepts. Throws std::runtime_error with one
  // line naming the address and what to do when it cannot listen there.
  StatusServer(boost::asio::io_context& io, const std::string& address, int port, Handler handler);
  ~StatusServer();
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  int port() const;
  std::size_t connection_count() const;
  void Stop();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cpplaunch
