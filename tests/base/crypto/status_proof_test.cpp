#include "base/crypto/status_proof.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <string>

using cpplaunch::CheckStatusProof;
using cpplaunch::StatusProof;

namespace {

constexpr int64_t kSent = 1795000000;

}  // namespace

// The MACs below come from Python, independently of this code:
//   hmac.new(key, b"cpplaunch-status\n" + str(t).encode() + b"\n" + path, "sha256").hexdigest()
TEST_CASE("StatusProof matches Python's hmac over the contract's message", "[crypto][status]") {
  CHECK(StatusProof("job-secret", kSent, "/status") ==
        "1795000000:e317c91623396c5391d0b8dd5cffa50948f4349df1f535e56d701b80177813e1");
  CHECK(StatusProof(std::string("\0\xffkey", 5), 1700000123, "/metrics") ==
        "1700000123:3202fb2a0710e91d59b35d340a332b644b40fb22f0761b8e130a20b8154a1aaa");
}

TEST_CASE("CheckStatusProof accepts a proof up to 300 s either side of now", "[crypto][status]") {
  std::string proof = StatusProof("job-secret", kSent, "/status");
  CHECK(CheckStatusProof("job-secret", proof, kSent, "/status"));
  CHECK(CheckStatusProof("job-secret", proof, kSent + 300, "/status"));
  CHECK(CheckStatusProof("job-secret", proof, kSent - 300, "/status"));
  CHECK_FALSE(CheckStatusProof("job-secret", proof, kSent + 301, "/status"));
  CHECK_FALSE(CheckStatusProof("job-secret", proof, kSent - 301, "/status"));
}

TEST_CASE("CheckStatusProof refuses another secret, path or time", "[crypto][status]") {
  std::string proof = StatusProof("job-secret", kSent, "/status");
  CHECK_FALSE(CheckStatusProof("other-secret", proof, kSent, "/status"));
  CHECK_FALSE(CheckStatusProof("job-secret", proof, kSent, "/metrics"));
  std::string moved = "1795000001" + proof.substr(proof.find(':'));
  CHECK_FALSE(CheckStatusProof("job-secret", moved, kSent, "/status"));
}

TEST_CASE("CheckStatusProof refuses malformed headers", "[crypto][status]") {
  std::string mac = StatusProof("s", kSent, "/status").substr(11);
  CHECK_FALSE(CheckStatusProof("s", "", kSent, "/status"));
  CHECK_FALSE(CheckStatusProof("s", mac, kSent, "/status"));
  CHECK_FALSE(CheckStatusProof("s", ":" + mac, kSent, "/status"));
  CHECK_FALSE(CheckStatusProof("s", "-1795000000:" + mac, kSent, "/status"));
  CHECK_FALSE(CheckStatusProof("s", "1795000000:" + mac.substr(1), kSent, "/status"));
  CHECK_FALSE(CheckStatusProof("s", "99999999999999999999999:" + mac, kSent, "/status"));
  std::string upper = mac;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK_FALSE(CheckStatusProof("s", "1795000000:" + upper, kSent, "/status"));
}
