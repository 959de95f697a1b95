#include "launcher/multihost/free_port.h"

#include <boost/asio/ip/tcp.hpp>

namespace cpplaunch {

int FreeTcpPort(boost::asio::io_context& io) {
  using boost::asio::ip::tcp;
  tcp::acceptor acceptor(io, tcp::endpoint(tcp::v4(), 0));
  return acceptor.local_endpoint().port();
}

}  // namespace cpplaunch
