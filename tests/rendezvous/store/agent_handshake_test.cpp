// The agent handshake's pure parts: the proof, the agent dialect's command bytes, and the
// decoder's order (HELLO, PROOF, then the rest).

#include "rendezvous/store/agent_handshake.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/request_decoder.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using test::FromHex;
using test::ToHex;

std::string Encoded(Command command, std::vector<std::string> keys = {},
                    std::vector<Bytes> values = {}, uint32_t u32 = 0, int64_t number = 0) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  request.u32 = u32;
  request.number = number;
  std::string bytes;
  REQUIRE(EncodeRequest(Dialect::kAgent, request, &bytes));
  return bytes;
}

// Feeds `stream` whole; returns each request's command name, then "MALFORMED: why" on failure.
std::vector<std::string> Decode(const std::string& stream) {
  RequestDecoder decoder;
  std::vector<std::string> out;
  std::string_view input(stream);
  for (;;) {
    auto result = decoder.Feed(input);
    input.remove_prefix(result.consumed);
    if (result.status == DecodeStatus::kMalformed) {
      out.push_back("MALFORMED: " + decoder.error());
      return out;
    }
    if (result.status == DecodeStatus::kNeedMore) return out;
    out.push_back(CommandName(decoder.request().command));
  }
}

TEST_CASE("AgentProof is an HMAC-SHA256 bound to the nonce and the secret", "[rendezvous][agent]") {
  const std::string nonce(kAgentNonceBytes, '\x42');
  const std::string proof = AgentProof("secret", nonce);
  CHECK(proof.size() == 32);
  CHECK(AgentProofValid("secret", nonce, proof));
  CHECK_FALSE(AgentProofValid("secret!", nonce, proof));
  CHECK_FALSE(AgentProofValid("", nonce, proof));
  std::string other_nonce = nonce;
  other_nonce[31] = '\x43';
  CHECK_FALSE(AgentProofValid("secret", other_nonce, proof));
  std::string flipped = proof;
  flipped[0] = static_cast<char>(flipped[0] ^ 1);
  CHECK_FALSE(AgentProofValid("secret", nonce, flipped));
  CHECK_FALSE(AgentProofValid("secret", nonce, proof.substr(0, 31)));
  // A connection that never got a nonce (or used it up) accepts no proof at all.
  CHECK_FALSE(AgentProofValid("", "", AgentProof("", "")));
  // Without a secret the handshake still runs, with an empty key.
  CHECK(AgentProofValid("", nonce, AgentProof("", nonce)));
  CHECK(NewAgentNonce().size() == kAgentNonceBytes);
  CHECK(NewAgentNonce() != NewAgentNonce());
}

// Issue 23 item 6: the store proves the secret too, so that an agent trusts no impostor that
// took the endpoint's port.
TEST_CASE("StoreProof is bound to the secret, both nonces and its own context",
          "[rendezvous][agent]") {
  const std::string agent_nonce(kAgentNonceBytes, 'a');
  const std::string store_nonce(kAgentNonceBytes, 's');
  const std::string proof = StoreProof("secret", agent_nonce, store_nonce);
  CHECK(proof.size() == 32);
  CHECK(StoreProofValid("secret", agent_nonce, store_nonce, proof));
  CHECK_FALSE(StoreProofValid("other", agent_nonce, store_nonce, proof));
  CHECK_FALSE(StoreProofValid("secret", store_nonce, agent_nonce, proof));  // nonces swapped
  CHECK_FALSE(StoreProofValid("secret", std::string(kAgentNonceBytes, 'b'), store_nonce, proof));
  CHECK_FALSE(StoreProofValid("secret", agent_nonce, store_nonce, proof.substr(1)));
  // An agent's proof (the only MAC an agent computes) never passes for the store's.
  CHECK_FALSE(
      StoreProofValid("secret", agent_nonce, store_nonce, AgentProof("secret", store_nonce)));
  CHECK_FALSE(StoreProofValid("secret", "", store_nonce, StoreProof("secret", "", store_nonce)));
}

TEST_CASE("the agent dialect keeps the modern numbers and adds 0xC7..0xCD", "[rendezvous][agent]") {
  CHECK(ToHex(Encoded(Command::kAgentHello, {}, {"nn"}, kAgentHelloMagic)) ==
        "c7 43 50 4c 41 02 00 00 00 00 00 00 00 6e 6e");
  CHECK(ToHex(Encoded(Command::kAgentProof, {}, {"pq"})) == "c8 02 00 00 00 00 00 00 00 70 71");
  CHECK(ToHex(Encoded(Command::kClaim, {"k"}, {"v"})) ==
        "c9 01 00 00 00 00 00 00 00 6b 01 00 00 00 00 00 00 00 76");
  CHECK(ToHex(Encoded(Command::kWill, {"k"}, {"v"})) ==
        "ca 01 00 00 00 00 00 00 00 6b 01 00 00 00 00 00 00 00 76");
  CHECK(ToHex(Encoded(Command::kCancelWills)) == "cb");
  CHECK(ToHex(Encoded(Command::kClearWorkerKeys)) == "cc");
  CHECK(ToHex(Encoded(Command::kArm, {"e", "h", "a", "c", "l"}, {"w"}, 0, 2)) ==
        "cd 01 00 00 00 00 00 00 00 65 01 00 00 00 00 00 00 00 77 01 00 00 00 00 00 00 00 68 "
        "01 00 00 00 00 00 00 00 61 01 00 00 00 00 00 00 00 63 02 00 00 00 00 00 00 00 "
        "01 00 00 00 00 00 00 00 6c");
  CHECK(ToHex(Encoded(Command::kListKeys)) == "11");  // modern LIST_KEYS
  CHECK(WireCode(Dialect::kAgent, Command::kValidate) == -1);
  CHECK(WireCode(Dialect::kAgent, Command::kWatchKey) == -1);
  // Neither PyTorch dialect has an agent command.
  for (Command command :
       {Command::kAgentHello, Command::kAgentProof, Command::kClaim, Command::kWill,
        Command::kCancelWills, Command::kClearWorkerKeys, Command::kArm}) {
    CHECK(WireCode(Dialect::kLegacy, command) == -1);
    CHECK(WireCode(Dialect::kModern, command) == -1);
  }
  for (int byte = 0xC7; byte <= 0xCD; ++byte) {
    CHECK_FALSE(CommandFromWire(Dialect::kLegacy, static_cast<uint8_t>(byte)));
    CHECK_FALSE(CommandFromWire(Dialect::kModern, static_cast<uint8_t>(byte)));
  }
  CHECK(ReplyShapeOf(Command::kAgentHello) == ReplyShape::kBytes);
  CHECK(ReplyShapeOf(Command::kAgentProof) == ReplyShape::kU8);
  CHECK(ReplyShapeOf(Command::kClaim) == ReplyShape::kBytes);
  CHECK(ReplyShapeOf(Command::kClearWorkerKeys) == ReplyShape::kI64);
  CHECK(ReplyShapeOf(Command::kArm) == ReplyShape::kI64);
  CHECK_FALSE(CommandFromWire(Dialect::kAgent, 0xCE));
}

TEST_CASE("RequestDecoder: an agent connection is HELLO, PROOF, then any other command",
          "[rendezvous][agent]") {
  const std::string hello =
      Encoded(Command::kAgentHello, {}, {std::string(kAgentNonceBytes, 'n')}, kAgentHelloMagic);
  const std::string proof = Encoded(Command::kAgentProof, {}, {std::string(32, 'p')});
  const std::string claim = Encoded(Command::kClaim, {"k"}, {"v"});
  const std::string list = Encoded(Command::kListKeys);
  // After the proof every request is behind its u32 tag (tag_framing.h).
  const std::string tag = FromHex("01 00 00 00");
  CHECK(Decode(hello + proof + tag + claim + tag + list) ==
        std::vector<std::string>{"AGENT_HELLO", "AGENT_PROOF", "CLAIM", "LIST_KEYS"});
  {
    RequestDecoder decoder;
    REQUIRE(decoder.Feed(hello).status == DecodeStatus::kComplete);
    CHECK(decoder.dialect() == Dialect::kAgent);
    CHECK(decoder.request().u32 == kAgentHelloMagic);
    CHECK(decoder.request().values == std::vector<Bytes>{std::string(kAgentNonceBytes, 'n')});
  }
  {
    // ARM's fields land where KvTable::Arm reads them.
    const std::vector<std::string> keys{"end", "hb", "armed", "count", "all"};
    const std::string wire = Encoded(Command::kArm, keys, {"will"}, 0, 7);
    RequestDecoder decoder;
    REQUIRE(decoder.Feed(hello).status == DecodeStatus::kComplete);
    REQUIRE(decoder.Feed(proof).status == DecodeStatus::kComplete);
    const std::string tagged = tag + wire;
    REQUIRE(decoder.Feed(tagged).status == DecodeStatus::kComplete);
    CHECK(decoder.request().command == Command::kArm);
    CHECK(decoder.request().keys == keys);
    CHECK(decoder.request().values == std::vector<Bytes>{"will"});
    CHECK(decoder.request().number == 7);
  }
  CHECK(Decode(hello + list).back() == "MALFORMED: LIST_KEYS out of order in the agent handshake");
  CHECK(Decode(hello + hello).back().starts_with("MALFORMED"));
  CHECK(Decode(hello + proof + tag + proof).back().starts_with("MALFORMED"));
  CHECK(Decode(hello + proof + tag + hello).back().starts_with("MALFORMED"));
  CHECK(Decode(hello + proof + tag + FromHex("00 ce f7 85 3c")).back().starts_with("MALFORMED"));
  // A proof is not a first message; agent commands do not exist in the PyTorch dialects.
  CHECK(Decode(proof).back().starts_with("MALFORMED: unknown command byte 0xc8 (legacy"));
  CHECK(Decode(FromHex("00 ce f7 85 3c") + claim).back() ==
        "MALFORMED: unknown command byte 0xc9 (modern dialect)");
}

}  // namespace
}  // namespace cpplaunch
