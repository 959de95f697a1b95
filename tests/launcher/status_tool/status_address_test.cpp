#include "launcher/status_tool/status_address.h"

#include <catch2/catch.hpp>

using cpplaunch::status::ParseStatusAddress;

TEST_CASE("ParseStatusAddress reads HOST:PORT and [IPv6]:PORT", "[status_tool]") {
  auto v4 = ParseStatusAddress("10.0.0.1:8000");
  REQUIRE(v4);
  CHECK(v4->host == "10.0.0.1");
  CHECK(v4->port == 8000);
  auto name = ParseStatusAddress("node-3.cluster:65535");
  REQUIRE(name);
  CHECK(name->host == "node-3.cluster");
  auto v6 = ParseStatusAddress("[::1]:8000");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 8000);
}

TEST_CASE("ParseStatusAddress refuses addresses without a usable port", "[status_tool]") {
  for (const char* text : {"", "host", "host:", ":8000", "host:0", "host:65536", "host:80x",
                           "host:-1", "::1:8000", "[]:80", "host:123456"}) {
    INFO(text);
    CHECK_FALSE(ParseStatusAddress(text));
  }
}
