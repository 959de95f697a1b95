#include "rendezvous/store/peer_networks.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace cpplaunch {
namespace {

std::vector<std::string> Texts(std::string_view list) {
  std::string error;
  auto networks = ParsePeerNetworks(list, &error);
  if (!networks) return {"error: " + error};
  std::vector<std::string> texts;
  for (const auto& network : *networks) texts.push_back(network.ToString());
  return texts;
}

bool Allowed(std::string_view list, std::string_view address) {
  std::string error;
  auto networks = ParsePeerNetworks(list, &error);
  REQUIRE(networks);
  return PeerAllowed(*networks, address);
}

TEST_CASE("ParsePeerNetworks reads CIDR lists of both families", "[rendezvous][peers]") {
  CHECK(Texts("10.0.0.0/8") == std::vector<std::string>{"10.0.0.0/8"});
  CHECK(Texts("10.0.0.0/8;192.168.1.7, fd00::/8  ::1") ==
        std::vector<std::string>{"10.0.0.0/8", "192.168.1.7/32", "fd00::/8", "::1/128"});
  CHECK(Texts("::ffff:10.1.0.0/112") == std::vector<std::string>{"10.1.0.0/16"});
  CHECK(Texts("0.0.0.0/0;::/0") == std::vector<std::string>{"0.0.0.0/0", "::/0"});
  CHECK(Texts("10.0.0.0/33") ==
        std::vector<std::string>{
            "error: '10.0.0.0/33': the prefix length must be a number from 0 to 32"});
  CHECK(Texts("fd00::/129").front().starts_with("error: 'fd00::/129'"));
  CHECK(Texts("::ffff:10.0.0.0/8").front().starts_with("error: '::ffff:10.0.0.0/8'"));
  CHECK(Texts("10.0.0.0/").front().starts_with("error"));
  CHECK(Texts("10.0.0.0/-1").front().starts_with("error"));
  CHECK(Texts("example.com") ==
        std::vector<std::string>{"error: 'example.com' is not an IP address or CIDR network"});
  CHECK(Texts(" ; ") ==
        std::vector<std::string>{"error: the list of allowed peer networks is empty"});
}

TEST_CASE("PeerAllowed matches prefixes, folding IPv4-mapped peers to IPv4",
          "[rendezvous][peers]") {
  CHECK(Allowed("10.0.0.0/8", "10.200.3.4"));
  CHECK_FALSE(Allowed("10.0.0.0/8", "11.0.0.1"));
  CHECK(Allowed("192.168.1.0/25", "192.168.1.127"));
  CHECK_FALSE(Allowed("192.168.1.0/25", "192.168.1.128"));
  CHECK(Allowed("10.0.0.0/8", "::ffff:10.1.2.3"));
  CHECK_FALSE(Allowed("::ffff:0:0/96", "::1"));
  CHECK(Allowed("fd00::/8", "fd12:3456::1"));
  CHECK_FALSE(Allowed("fd00::/8", "fe80::1"));
  CHECK_FALSE(Allowed("fd00::/8", "10.0.0.1"));  // families never match each other
  CHECK(Allowed("0.0.0.0/0", "1.2.3.4"));
  CHECK_FALSE(Allowed("0.0.0.0/0", "::1"));
  CHECK_FALSE(Allowed("10.0.0.0/8", "not an address"));
  CHECK(PeerAllowed({}, "203.0.113.9"));  // no list: everyone
}

}  // namespace
}  // namespace cpplaunch
