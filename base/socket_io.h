#pragma once
// TCP sockets at the OS boundary, for code that drives its own sockets (the blocking store
// client's connect, the store server's accept burst): a connect bounded by a timeout and one
// non-blocking accept. Sockets come back owned by UniqueFd, close-on-exec and non-blocking.
// SetCloseOnExec covers a socket another library opened (asio's acceptor).
// Nothing here throws or logs; failures are errno values (see fd_io.h for ErrorText).

#include <sys/socket.h>

#include <chrono>

#include "base/unique_fd.h"

namespace cpplaunch {

struct ConnectResult {
  UniqueFd fd;             // the connected socket (TCP_NODELAY set), or invalid
  int error = 0;           // errno value of the failed socket() or connect()
  bool timed_out = false;  // `timeout` passed while the connection was in progress
};

// Opens a non-blocking stream socket of `family` and connects it to `address`, waiting at most
// `timeout` for the handshake.
ConnectResult ConnectTcp(int family, const sockaddr* address, socklen_t length,
                         std::chrono::milliseconds timeout);

// The local address this host would send from to reach `address` (the routing table's
// choice): a datagram socket is connected there, which sends nothing, and asked its name.
// Returns 0 with *source filled, or the errno value (ENETUNREACH when no route leads there).
int RouteSourceAddress(const sockaddr* address, socklen_t length, sockaddr_storage* source);

enum class AcceptStatus {
  kAccepted,    // `fd` is the new connection
  kQueueEmpty,  // no connection is pending (EAGAIN)
  kRetry,       // that connection vanished or a signal arrived: the next may succeed
  kFailed,      // a resource or descriptor error (EMFILE, ENOMEM, EBADF...): `error`
};

struct AcceptResult {
  AcceptStatus status = AcceptStatus::kFailed;
  UniqueFd fd;
  int error = 0;
};

// One accept on the non-blocking listening socket `listen_fd` (borrowed). The connection is
// created close-on-exec and non-blocking in the same call, so a process forked meanwhile never
// inherits it.
AcceptResult AcceptConnection(int listen_fd);

// Sets close-on-exec on `fd` (borrowed), keeping its other descriptor flags, so that processes
// forked and exec'd later do not inherit it. Returns 0, or the errno value of the failed fcntl.
int SetCloseOnExec(int fd);

// Turns on TCP keep-alive probes on the connected socket `fd` (borrowed): after `idle` without
// traffic, a probe every `interval`; `count` unanswered probes break the connection. This is how
// a long-lived connection that carries nothing for long (a watch stream) notices a peer host
// that vanished without closing it. Returns 0, or the errno value of the failed setsockopt.
int SetTcpKeepAlive(int fd, std::chrono::seconds idle, std::chrono::seconds interval, int count);

}  // namespace cpplaunch
