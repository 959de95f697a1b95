#pragma once
// A TCP port free on every interface of this host, for a server another process starts soon
// after (--worker-store=rank0: worker rank 0's TCPStore, which PyTorch binds on every
// interface). The port is only free when asked, as with torchrun's own pick: a process may
// take it before the server binds it. Threads: any (a socket of its own, no io_context work).

#include <boost/asio/io_context.hpp>

namespace cpplaunch {

// Binds an IPv4 wildcard socket to port 0, reads the port and closes the socket.
// Throws std::system_error when no socket can be bound.
int FreeTcpPort(boost::asio::io_context& io);

}  // namespace cpplaunch
