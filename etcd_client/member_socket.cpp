#include "etcd_client/member_socket.h"

#include <boost/asio/redirect_error.hpp>
#include <chrono>

#include "base/socket_io.h"

namespace cpplaunch::etcd {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr auto kProbeIdle = std::chrono::seconds(5);
constexpr auto kProbeInterval = std::chrono::seconds(2);
constexpr int kProbeCount = 3;

}  // namespace

asio::awaitable<tcp::resolver::results_type> ResolveMember(asio::any_io_executor executor,
                                                           const Endpoint& endpoint,
                                                           std::string* why) {
  tcp::resolver resolver(executor);
  boost::system::error_code ec;
  auto results = co_await resolver.async_resolve(endpoint.host, std::to_string(endpoint.port),
                                                 asio::redirect_error(asio::use_awaitable, ec));
  if (ec) *why = "cannot resolve '" + endpoint.host + "': " + ec.message();
  co_return results;
}

void PrepareMemberSocket(tcp::socket& socket) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  SetCloseOnExec(socket.native_handle());
}

void ProbeSilentMember(tcp::socket& socket) {
  SetTcpKeepAlive(socket.native_handle(), kProbeIdle, kProbeInterval, kProbeCount);
}

}  // namespace cpplaunch::etcd
