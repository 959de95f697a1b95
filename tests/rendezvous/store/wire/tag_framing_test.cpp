// The tagged framing of agent connections (tag_framing.h), byte by byte: requests behind their
// tags, the server's decoder reading them after the handshake, and replies matched by tag in
// any order.

#include "rendezvous/store/wire/tag_framing.h"

#include <catch2/catch.hpp>
#include <string>

#include "rendezvous/store/wire/request_decoder.h"
#include "tests/rendezvous/store/agent_wire.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using test::FromHex;
using test::ToHex;

// HELLO and a proof (any 32 bytes: the decoder checks the order, the server the proof).
std::string Handshake() {
  return test::AgentHelloBytes() + test::AgentProofBytes(std::string(32, 'p'));
}

TEST_CASE("tagged requests: the tag, little-endian, before the command byte",
          "[store][tag_framing]") {
  CHECK(ToHex(test::EncodeTagged(0x01020304, Command::kGet, {"k"})) ==
        "04 03 02 01 03 01 00 00 00 00 00 00 00 6b");
  CHECK(ToHex(test::EncodeTagged(7, Command::kWait, {"a"})) ==
        "07 00 00 00 06 01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 61");
  // An agent's CANCEL_WAIT names the tag of the WAIT it cancels.
  CHECK(ToHex(test::EncodeTagged(8, Command::kCancelWait, {}, {}, 7)) ==
        "08 00 00 00 0c 07 00 00 00");
  CHECK(ToHex(test::EncodeTagged(9, Command::kClaim, {"n"}, {"v"})) ==
        "09 00 00 00 c9 01 00 00 00 00 00 00 00 6e 01 00 00 00 00 00 00 00 76");
  // PyTorch's modern CANCEL_WAIT keeps its layout: the command byte alone.
  Request cancel;
  cancel.command = Command::kCancelWait;
  std::string modern;
  REQUIRE(EncodeRequest(Dialect::kModern, cancel, &modern));
  CHECK(ToHex(modern) == "0c");
}

TEST_CASE("the request decoder reads a tag before every agent request after the handshake",
          "[store][tag_framing]") {
  RequestDecoder decoder;
  std::string input = Handshake() + test::EncodeTagged(0xA1B2C3D4, Command::kGet, {"k"}) +
                      test::EncodeTagged(2, Command::kCancelWait, {}, {}, 0xA1B2C3D4);
  std::vector<Request> seen;
  // Byte by byte: a tag split anywhere is reassembled.
  for (char byte : input) {
    DecodeResult result = decoder.Feed(std::string_view(&byte, 1));
    REQUIRE(result.status != DecodeStatus::kMalformed);
    if (result.status == DecodeStatus::kComplete) seen.push_back(decoder.request());
  }
  REQUIRE(seen.size() == 4);
  CHECK(seen[0].command == Command::kAgentHello);
  CHECK(seen[1].command == Command::kAgentProof);
  CHECK(seen[1].tag == 0);
  CHECK(seen[2].command == Command::kGet);
  CHECK(seen[2].tag == 0xA1B2C3D4);
  CHECK(seen[2].keys == std::vector<std::string>{"k"});
  CHECK(seen[3].command == Command::kCancelWait);
  CHECK(seen[3].tag == 2);
  CHECK(seen[3].u32 == 0xA1B2C3D4);
  CHECK(decoder.idle());
}

TEST_CASE("PyTorch's dialects carry no tags", "[store][tag_framing]") {
  RequestDecoder decoder;
  // Modern: VALIDATE, then GET 'k' straight after.
  DecodeResult validate = decoder.Feed(FromHex("00 ce f7 85 3c"));
  REQUIRE(validate.status == DecodeStatus::kComplete);
  DecodeResult get = decoder.Feed(FromHex("03 01 00 00 00 00 00 00 00 6b"));
  REQUIRE(get.status == DecodeStatus::kComplete);
  CHECK(decoder.request().command == Command::kGet);
  CHECK(decoder.request().tag == 0);
}

TEST_CASE("tagged replies are matched by tag, in any order", "[store][tag_framing]") {
  TaggedReplyDecoder decoder;
  decoder.Expect(7, ReplyShape::kU8);
  decoder.Expect(9, ReplyShape::kBytes);
  decoder.Expect(11, ReplyShape::kBytesList, 0);  // MULTI_GET of no keys: the tag alone
  CHECK(decoder.expected() == 3);
  std::string input = FromHex("09 00 00 00 01 00 00 00 00 00 00 00 78") +  // GET: "x"
                      FromHex("0b 00 00 00") +                             // MULTI_GET: nothing
                      FromHex("07 00 00 00 00");                           // WAIT: STOP_WAITING
  std::vector<std::pair<uint32_t, Reply>> replies;
  std::string_view rest = input;
  while (!rest.empty()) {
    DecodeResult result = decoder.Feed(rest.substr(0, 3));  // in pieces of 3 bytes
    rest.remove_prefix(result.consumed);
    REQUIRE(result.status != DecodeStatus::kMalformed);
    if (result.status == DecodeStatus::kComplete)
      replies.emplace_back(decoder.tag(), decoder.reply());
  }
  REQUIRE(replies.size() == 3);
  CHECK(replies[0].first == 9);
  CHECK(replies[0].second.values == std::vector<Bytes>{"x"});
  CHECK(replies[1].first == 11);
  CHECK(replies[1].second.values.empty());
  CHECK(replies[2].first == 7);
  CHECK(replies[2].second.u8 == kStopWaiting);
  CHECK(decoder.expected() == 0);
}

TEST_CASE("a reply under a tag no request carried is malformed", "[store][tag_framing]") {
  TaggedReplyDecoder decoder;
  decoder.Expect(1, ReplyShape::kU8);
  DecodeResult result = decoder.Feed(FromHex("02 00 00 00 00"));
  CHECK(result.status == DecodeStatus::kMalformed);
  CHECK(decoder.error() == "a reply with tag 2, which no request carried");
  CHECK(decoder.Feed(FromHex("01 00 00 00 00")).status == DecodeStatus::kMalformed);
}

}  // namespace
}  // namespace cpplaunch
