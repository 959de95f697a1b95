#include "base/crypto/base64.h"

#include <catch2/catch.hpp>
#include <string>

using cpplaunch::Base64Decode;
using cpplaunch::Base64Encode;

TEST_CASE("base64 encodes RFC 4648's vectors and etcd's example", "[base64]") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("foob") == "Zm9vYg==");
  CHECK(Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(Base64Encode("foobar") == "Zm9vYmFy");
  CHECK(Base64Encode("/a/k") == "L2Evaw==");
}

TEST_CASE("base64 round-trips every byte value", "[base64]") {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t length : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{255}, size_t{256}}) {
    std::string bytes = all.substr(0, length);
    CHECK(Base64Decode(Base64Encode(bytes)) == bytes);
  }
}

TEST_CASE("base64 refuses malformed text", "[base64]") {
  CHECK(Base64Decode("Zg=") == std::nullopt);       // length
  CHECK(Base64Decode("Z!==") == std::nullopt);      // alphabet
  CHECK(Base64Decode("Zg==Zg==") == std::nullopt);  // padding in the middle
  CHECK(Base64Decode("=Zg=") == std::nullopt);
  CHECK(Base64Decode("Zm9v") == std::string("foo"));
}
