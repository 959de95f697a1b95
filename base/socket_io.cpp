#include "base/socket_io.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <cerrno>

#include "base/fd_io.h"

namespace cpplaunch {

ConnectResult ConnectTcp(int family, const sockaddr* address, socklen_t length,
                         std::chrono::milliseconds timeout) {
  ConnectResult result;
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) {
    result.error = errno;
    return result;
  }
  int rc = ::connect(fd.get(), address, length);
  int error = rc == 0 ? 0 : errno;
  // A non-blocking connect reports EINPROGRESS; the outcome arrives as writability, and the
  // error (if any) is then read from SO_ERROR, not errno.
  if (error == EINPROGRESS) {
    if (!WaitFd(fd.get(), POLLOUT, timeout)) {
      result.timed_out = true;
      return result;
    }
    error = 0;
    socklen_t size = sizeof error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
  }
  if (error != 0) {
    result.error = error;
    return result;
  }
  // Store traffic is small requests waiting on replies: Nagle's delay would only add latency.
  // A failure here costs speed, not correctness, so it is not reported.
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  result.fd = std::move(fd);
  return result;
}

int RouteSourceAddress(const sockaddr* address, socklen_t length, sockaddr_storage* source) {
  UniqueFd fd(::socket(address->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return errno;
  if (::connect(fd.get(), address, length) != 0) return errno;
  socklen_t size = sizeof(*source);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(source), &size) != 0) return errno;
  return 0;
}

AcceptResult AcceptConnection(int listen_fd) {
  AcceptResult result;
  // accept4 sets CLOEXEC atomically; a separate fcntl would leave a window for a fork.
  result.fd.reset(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (result.fd) {
    result.status = AcceptStatus::kAccepted;
    return result;
  }
  const int error = errno;
  if (error == EAGAIN || error == EWOULDBLOCK) {
    result.status = AcceptStatus::kQueueEmpty;
  } else if (error == EINTR || error == ECONNABORTED || error == EPROTO) {
    // A connection that died in the queue (accept(2): ECONNABORTED, EPROTO) is no reason to
    // stop accepting the others.
    result.status = AcceptStatus::kRetry;
  } else {
    result.status = AcceptStatus::kFailed;
    result.error = error;
  }
  return result;
}

int SetCloseOnExec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0) return errno;
  if (::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) return errno;
  return 0;
}

int SetTcpKeepAlive(int fd, std::chrono::seconds idle, std::chrono::seconds interval, int count) {
  const int options[][2] = {{SOL_SOCKET, SO_KEEPALIVE},
                            {IPPROTO_TCP, TCP_KEEPIDLE},
                            {IPPROTO_TCP, TCP_KEEPINTVL},
                            {IPPROTO_TCP, TCP_KEEPCNT}};
  const int values[] = {1, static_cast<int>(idle.count()), static_cast<int>(interval.count()),
                        count};
  for (size_t i = 0; i < 4; ++i) {
    if (::setsockopt(fd, options[i][0], options[i][1], &values[i], sizeof values[i]) < 0) {
      return errno;
    }
  }
  return 0;
}

}  // namespace cpplaunch
