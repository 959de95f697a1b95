#pragma once
// Test fixtures: a StoreServer running on its own io_context thread, and a raw blocking TCP
// connection for byte-level checks.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "rendezvous/store/store_server.h"

namespace cpplaunch::test {

class LoopbackServer {
 public:
  explicit LoopbackServer(StoreServerOptions options = Defaults())
      : server_(std::make_unique<StoreServer>(io_, options)), thread_([this] { io_.run(); }) {}
  ~LoopbackServer() {
    boost::asio::post(io_, [this] {
      server_.reset();
      io_.stop();
    });
    thread_.join();
  }
  static StoreServerOptions Defaults() {
    StoreServerOptions options;
    options.bind_host = "127.0.0.1";
    return options;
  }
  uint16_t port() const { return port_cache_ ? port_cache_ : (port_cache_ = server_->port()); }
  // Runs `f(server)` on the loop thread and returns its result.
  template <typename F>
  auto OnLoop(F f) {
    std::packaged_task<decltype(f(*server_))()> task([&] { return f(*server_); });
    auto result = task.get_future();
    boost::asio::post(io_, [&task] { task(); });
    return result.get();
  }

 private:
  boost::asio::io_context io_{1};
  std::unique_ptr<StoreServer> server_;
  mutable uint16_t port_cache_ = 0;
  std::thread thread_;
};

// A plain blocking socket to 127.0.0.1 (or ::1) with bounded waits.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port, bool v6 = false) {
    fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;
    if (v6) {
      sockaddr_in6 address{};
      address.sin6_family = AF_INET6;
      address.sin6_port = htons(port);
      address.sin6_addr = in6addr_loopback;
      rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    } else {
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(port);
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    }
    connected_ = rc == 0;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  void Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<size_t>(n);
    }
  }
  // Reads exactly n bytes; returns fewer if the peer closed or the time ran out.
  std::string Receive(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::string got;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (got.size() < n) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd entry{fd_, POLLIN, 0};
      if (::poll(&entry, 1, static_cast<int>(left.count())) <= 0) break;
      char buffer[65536];
      ssize_t r = ::recv(fd_, buffer, std::min(sizeof buffer, n - got.size()), 0);
      if (r <= 0) {
        closed_ = true;
        break;
      }
      got.append(buffer, static_cast<size_t>(r));
    }
    return got;
  }
  // True when the server closed the connection within `timeout`.
  bool ClosedByPeer(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    Receive(1u << 30, timeout);
    return closed_;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

}  // namespace cpplaunch::test
