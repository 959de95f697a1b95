#include "base/crypto/random_bytes.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

using cpplaunch::RandomBytes;

TEST_CASE("RandomBytes returns the requested count, different every time") {
  CHECK(RandomBytes(0).empty());
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string nonce = RandomBytes(32);
    CHECK(nonce.size() == 32);
    seen.insert(nonce);
  }
  CHECK(seen.size() == 100);  // a repeat among 100 draws of 256 bits would mean a broken source
  CHECK(RandomBytes(100000).size() == 100000);
}
