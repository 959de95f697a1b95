#include "base/crypto/sha256.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace {

std::string Hex(const cpplaunch::Sha256::Digest& digest) {
  std::string text;
  char part[3];
  for (uint8_t byte : digest) {
    std::snprintf(part, sizeof part, "%02x", byte);
    text += part;
  }
  return text;
}

}  // namespace

using cpplaunch::Sha256;

// FIPS 180-4's examples (NIST "SHA256.pdf", "SHA2_Additional.pdf").
TEST_CASE("Sha256 matches the FIPS 180-4 examples") {
  CHECK(Hex(Sha256::Of("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Hex(Sha256::Of("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Hex(Sha256::Of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(
      Hex(Sha256::Of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklm"
                     "nopqklmnopqrlmnopqrsmnopqrstnopqrstu")) ==
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST_CASE("Sha256 gives the same digest however the input is split") {
  Sha256 million;
  const std::string chunk(997, 'a');  // a prime, so chunks straddle every block boundary
  size_t left = 1000000;
  while (left > 0) {
    size_t take = std::min(left, chunk.size());
    million.Update(std::string_view(chunk).substr(0, take));
    left -= take;
  }
  CHECK(Hex(million.Finish()) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding boundary (55, 56, 63, 64 bytes) against one-shot digests.
  for (size_t size : {55u, 56u, 63u, 64u, 65u, 119u, 120u}) {
    std::string text(size, 'x');
    Sha256 split;
    split.Update(std::string_view(text).substr(0, size / 3));
    split.Update(std::string_view(text).substr(size / 3));
    CHECK(split.Finish() == Sha256::Of(text));
  }
  CHECK(Hex(Sha256::Of(std::string(64, 'a'))) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}
