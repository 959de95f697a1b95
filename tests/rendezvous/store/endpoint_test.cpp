#include "rendezvous/store/endpoint.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

Endpoint Parsed(std::string_view text) {
  std::string error;
  std::optional<Endpoint> endpoint = ParseEndpoint(text, &error);
  INFO(error);
  REQUIRE(endpoint);
  return *endpoint;
}

std::string ErrorOf(std::string_view text) {
  std::string error;
  CHECK_FALSE(ParseEndpoint(text, &error));
  return error;
}

TEST_CASE("ParseEndpoint reads host, host:port and IPv6 forms", "[rendezvous][endpoint]") {
  CHECK(Parsed("node1").host == "node1");
  CHECK(Parsed("node1").port == -1);
  CHECK(Parsed("10.0.0.1:29500").host == "10.0.0.1");
  CHECK(Parsed("10.0.0.1:29500").port == 29500);
  CHECK(Parsed("[::1]:80").host == "::1");
  CHECK(Parsed("[::1]:80").port == 80);
  CHECK(Parsed("[fe80::2]").port == -1);
  CHECK(Parsed("::1").host == "::1");  // a bare IPv6 literal carries no port
  CHECK(Parsed("::1").port == -1);
  CHECK(Parsed("h:0").port == 0);
  CHECK(Parsed("h:65535").port == 65535);
}

TEST_CASE("ParseEndpoint refuses broken hosts and ports with one line", "[rendezvous][endpoint]") {
  CHECK(ErrorOf("[::1") == "unbalanced '[' in endpoint '[::1'");
  CHECK(ErrorOf("[::1]x") == "unexpected text after ']' in endpoint '[::1]x'");
  CHECK(ErrorOf(":80") == "invalid host in endpoint ':80'");
  CHECK(ErrorOf("bad host") == "invalid host in endpoint 'bad host'");
  CHECK(ErrorOf("h:65536") == "invalid port in endpoint 'h:65536' (expected 0-65535)");
  CHECK(ErrorOf("h:+80").starts_with("invalid port"));
  CHECK(ErrorOf("h:8_0").starts_with("invalid port"));
  CHECK(ErrorOf("h:123456").starts_with("invalid port"));
  CHECK(ErrorOf("h:").starts_with("invalid port"));
}

TEST_CASE("Endpoint::ToString brackets IPv6 and omits a missing port", "[rendezvous][endpoint]") {
  CHECK((Endpoint{"::1", 80}).ToString() == "[::1]:80");
  CHECK((Endpoint{"node1", -1}).ToString() == "node1");
  CHECK((Endpoint{"10.0.0.1", 29500}).ToString() == "10.0.0.1:29500");
}

}  // namespace
}  // namespace cpplaunch
