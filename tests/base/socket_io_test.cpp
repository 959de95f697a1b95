#include "base/socket_io.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <catch2/catch.hpp>
#include <cerrno>

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

// A non-blocking listening socket on 127.0.0.1 with an OS-chosen port.
struct Listener {
  UniqueFd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
  sockaddr_in address{};

  Listener() {
    REQUIRE(fd);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    socklen_t size = sizeof address;
    REQUIRE(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &size) == 0);
    REQUIRE(::listen(fd.get(), 8) == 0);
  }
  const sockaddr* addr() const { return reinterpret_cast<const sockaddr*>(&address); }
};

bool HasFlag(int fd, int get, int flag) { return (::fcntl(fd, get) & flag) != 0; }

TEST_CASE("ConnectTcp connects a non-blocking, close-on-exec socket with TCP_NODELAY") {
  Listener listener;
  ConnectResult connected =
      ConnectTcp(AF_INET, listener.addr(), sizeof listener.address, milliseconds(5000));
  REQUIRE(connected.fd);
  CHECK(connected.error == 0);
  CHECK_FALSE(connected.timed_out);
  CHECK(HasFlag(connected.fd.get(), F_GETFL, O_NONBLOCK));
  CHECK(HasFlag(connected.fd.get(), F_GETFD, FD_CLOEXEC));
  int nodelay = 0;
  socklen_t size = sizeof nodelay;
  REQUIRE(::getsockopt(connected.fd.get(), IPPROTO_TCP, TCP_NODELAY, &nodelay, &size) == 0);
  CHECK(nodelay != 0);
}

TEST_CASE("ConnectTcp reports a refused connection as its errno") {
  sockaddr_in closed{};
  {
    Listener listener;  // a port that was free a moment ago and is closed again
    closed = listener.address;
  }
  ConnectResult connected = ConnectTcp(AF_INET, reinterpret_cast<const sockaddr*>(&closed),
                                       sizeof closed, milliseconds(5000));
  CHECK_FALSE(connected.fd);
  CHECK(connected.error == ECONNREFUSED);
  CHECK_FALSE(connected.timed_out);
}

TEST_CASE("AcceptConnection tells an empty queue, a connection and a failure apart") {
  Listener listener;
  AcceptResult none = AcceptConnection(listener.fd.get());
  CHECK(none.status == AcceptStatus::kQueueEmpty);
  CHECK_FALSE(none.fd);

  ConnectResult client =
      ConnectTcp(AF_INET, listener.addr(), sizeof listener.address, milliseconds(5000));
  REQUIRE(client.fd);
  AcceptResult accepted = AcceptConnection(listener.fd.get());
  REQUIRE(accepted.status == AcceptStatus::kAccepted);
  REQUIRE(accepted.fd);
  CHECK(HasFlag(accepted.fd.get(), F_GETFL, O_NONBLOCK));
  CHECK(HasFlag(accepted.fd.get(), F_GETFD, FD_CLOEXEC));

  AcceptResult failed = AcceptConnection(-1);
  CHECK(failed.status == AcceptStatus::kFailed);
  CHECK(failed.error == EBADF);
}

TEST_CASE("SetCloseOnExec marks a socket close-on-exec and keeps its status flags") {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
  REQUIRE(fd);
  REQUIRE_FALSE(HasFlag(fd.get(), F_GETFD, FD_CLOEXEC));
  CHECK(SetCloseOnExec(fd.get()) == 0);
  CHECK(HasFlag(fd.get(), F_GETFD, FD_CLOEXEC));
  CHECK(HasFlag(fd.get(), F_GETFL, O_NONBLOCK));
  CHECK(SetCloseOnExec(fd.get()) == 0);  // already set: still fine
  CHECK(HasFlag(fd.get(), F_GETFD, FD_CLOEXEC));
}

TEST_CASE("SetCloseOnExec reports a bad descriptor as EBADF") {
  CHECK(SetCloseOnExec(-1) == EBADF);
}

int IntOption(int fd, int level, int name) {
  int value = -1;
  socklen_t size = sizeof value;
  REQUIRE(::getsockopt(fd, level, name, &value, &size) == 0);
  return value;
}

TEST_CASE("SetTcpKeepAlive sets the probes' idle time, interval and count") {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd);
  CHECK(SetTcpKeepAlive(fd.get(), std::chrono::seconds(5), std::chrono::seconds(2), 3) == 0);
  CHECK(IntOption(fd.get(), SOL_SOCKET, SO_KEEPALIVE) == 1);
  CHECK(IntOption(fd.get(), IPPROTO_TCP, TCP_KEEPIDLE) == 5);
  CHECK(IntOption(fd.get(), IPPROTO_TCP, TCP_KEEPINTVL) == 2);
  CHECK(IntOption(fd.get(), IPPROTO_TCP, TCP_KEEPCNT) == 3);
  CHECK(SetTcpKeepAlive(-1, std::chrono::seconds(5), std::chrono::seconds(2), 3) == EBADF);
}

}  // namespace
}  // namespace cpplaunch
