#include "base/crypto/hmac.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace {

std::string Hex(const std::string& bytes) {
  std::string text;
  char part[3];
  for (unsigned char byte : bytes) {
    std::snprintf(part, sizeof part, "%02x", byte);
    text += part;
  }
  return text;
}

}  // namespace

using cpplaunch::ConstantTimeEqual;
using cpplaunch::HmacSha256;

// RFC 4231 section 4 (HMAC-SHA-256 lines); case 5 is a truncated MAC and is left out.
TEST_CASE("HmacSha256 matches the RFC 4231 test cases") {
  CHECK(Hex(HmacSha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(Hex(HmacSha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(Hex(HmacSha256(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (char c = 1; c <= 25; ++c) key4.push_back(c);
  CHECK(Hex(HmacSha256(key4, std::string(50, '\xcd'))) ==
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  const std::string long_key(131, '\xaa');  // longer than a block: hashed first
  CHECK(Hex(HmacSha256(long_key, "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(Hex(HmacSha256(long_key,
                       "This is a test using a larger than block-size key and a larger than "
                       "block-size data. The key needs to be hashed before being used by the "
                       "HMAC algorithm.")) ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("HmacSha256 accepts an empty key, and ConstantTimeEqual compares bytes") {
  CHECK(HmacSha256("", "m").size() == 32);
  CHECK(HmacSha256("", "m") != HmacSha256("k", "m"));
  CHECK(ConstantTimeEqual("abc", "abc"));
  CHECK_FALSE(ConstantTimeEqual("abc", "abd"));
  CHECK_FALSE(ConstantTimeEqual("abc", "ab"));
  CHECK(ConstantTimeEqual("", ""));
}
