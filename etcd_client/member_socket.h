#pragma once
// The TCP steps both of the etcd client's transports take to reach a member (grpc_connection,
// http_connection): resolving its name, preparing the connected socket, and probing a connection
// that may stay silent for long. One place for the policy; nothing here throws.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <string>

#include "base/asio_coroutine.h"
#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd {

// The member's addresses; empty, with *why ("cannot resolve 'host': ..."), when its name does not
// resolve.
boost::asio::awaitable<boost::asio::ip::tcp::resolver::results_type> ResolveMember(
    boost::asio::any_io_executor executor, const Endpoint& endpoint, std::string* why);

// A connected socket: no Nagle delay, and close-on-exec (the agent's workers are forked from this
// process: they must not hold its connections).
void PrepareMemberSocket(boost::asio::ip::tcp::socket& socket);

// TCP keep-alive probes for a connection that carries nothing while nothing changes (a watch): a
// member's host that vanished without closing it is noticed within about 11 s.
void ProbeSilentMember(boost::asio::ip::tcp::socket& socket);

}  // namespace cpplaunch::etcd
