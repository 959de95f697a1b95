// Who holds a port (issue 23 item 6): the refusal to join an unknown store names it.

#include "launcher/multihost/port_holder.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("ListeningSocketInodes reads listening sockets of one port from /proc/net/tcp",
          "[agent][store_host]") {
  const std::string table =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 0100007F:7318 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
      "0 4242 1 0000000000000000 100 0 0 10 0\n"
      // The same port, connected (01): not a listener.
      "   1: 0100007F:7318 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        "
      "0 777 1 0000000000000000 20 4 30 10 -1\n"
      // Another port.
      "   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
      "0 555 1 0000000000000000 100 0 0 10 0\n"
      "   3: garbage\n";
  CHECK(ListeningSocketInodes(table, 0x7318) == std::vector<uint64_t>{4242});
  CHECK(ListeningSocketInodes(table, 0x1F90) == std::vector<uint64_t>{555});
  CHECK(ListeningSocketInodes(table, 1).empty());
  CHECK(ListeningSocketInodes("", 0x7318).empty());
  const std::string v6 =
      "  sl  local_address                         remote_address                        st "
      "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000000000000:7318 00000000000000000000000000000000:0000 0A "
      "00000000:00000000 00:00000000 00000000     0        0 9001 1 0000000000000000 100 0 0 "
      "10 0\n";
  CHECK(ListeningSocketInodes(v6, 0x7318) == std::vector<uint64_t>{9001});
}

TEST_CASE("FindPortHolder names this process for a port it listens on", "[agent][store_host]") {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const int port = acceptor.local_endpoint().port();
  const auto holder = FindPortHolder(port);
  REQUIRE(holder);
  CHECK(holder->starts_with("pid " + std::to_string(::getpid()) + " ("));
  acceptor.close();
  CHECK_FALSE(FindPortHolder(port));
}

TEST_CASE("BusyStorePortRefusal names the holder, or says it cannot be seen",
          "[agent][store_host]") {
  CHECK(BusyStorePortRefusal("127.0.0.1:29400", "pid 42 (nc)") ==
        "cannot serve the job's store on 127.0.0.1:29400: the port is held by pid 42 (nc); with a "
        "secret_file an agent on the endpoint's host does not join whatever holds the port: stop "
        "that process, or give --rdzv-conf is_host=0 to the agents that should join another "
        "agent's store there (docs/security.md)");
  CHECK_THAT(BusyStorePortRefusal("[::1]:29400", std::nullopt),
             Catch::Contains("held by a process this agent cannot see in /proc"));
}

}  // namespace
}  // namespace cpplaunch
