#include "rendezvous/store/wire/reply_codec.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using test::FromHex;
using test::ToHex;

TEST_CASE("EncodeRequest refuses commands the dialect lacks", "[rendezvous][wire]") {
  Request ping;
  ping.command = Command::kPing;
  Request watch;
  watch.command = Command::kWatchKey;
  watch.keys = {"k"};
  std::string out;
  CHECK_FALSE(EncodeRequest(Dialect::kLegacy, ping, &out));
  CHECK_FALSE(EncodeRequest(Dialect::kModern, watch, &out));
  CHECK(out.empty());
}

TEST_CASE("Reply encoders write little-endian integers and length-prefixed bytes",
          "[rendezvous][wire]") {
  std::string out;
  EncodeU8(7, &out);
  EncodeU32(12345, &out);
  EncodeI64(-1, &out);
  EncodeU64(2, &out);
  EncodeBytes("ab", &out);
  CHECK(ToHex(out) == ToHex(FromHex("07 39 30 00 00 ff ff ff ff ff ff ff ff 02 00 00 00 00 00 00 "
                                    "00 02 00 00 00 00 00 00 00 61 62")));
  std::string event;
  EncodeWatchEvent(kKeyCreated, "/wk", "", "v1", &event);
  CHECK(ToHex(event) == ToHex(FromHex("01 03 00 00 00 00 00 00 00 2f 77 6b 00 00 00 00 00 00 00 "
                                      "00 02 00 00 00 00 00 00 00 76 31")));
}

// Decodes `hex` as a reply of `shape`, fed in two parts cut at every position.
std::vector<Reply> DecodeReplyAllCuts(ReplyShape shape, const std::string& hex, uint64_t count = 0,
                                      WireLimits limits = {}) {
  std::string bytes = FromHex(hex);
  std::vector<Reply> replies;
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    INFO("reply " << hex << " cut at " << cut);
    ReplyDecoder decoder(limits);
    decoder.Expect(shape, count);
    std::string_view all(bytes);
    auto first = decoder.Feed(all.substr(0, cut));
    if (first.status == DecodeStatus::kMalformed) return {};
    if (first.status == DecodeStatus::kNeedMore) {
      REQUIRE(first.consumed == cut);
      auto second = decoder.Feed(all.substr(cut));
      if (second.status == DecodeStatus::kMalformed) return {};
      REQUIRE(second.status == DecodeStatus::kComplete);
      REQUIRE(first.consumed + second.consumed == bytes.size());
    } else {
      REQUIRE(first.consumed == bytes.size());
    }
    replies.push_back(decoder.reply());
  }
  return replies;
}

TEST_CASE("ReplyDecoder decodes each reply shape however it is split", "[rendezvous][wire]") {
  for (const auto& r : DecodeReplyAllCuts(ReplyShape::kU32, "39 30 00 00")) CHECK(r.u32 == 12345);
  for (const auto& r : DecodeReplyAllCuts(ReplyShape::kI64, "ff ff ff ff ff ff ff ff"))
    CHECK(r.number == -1);
  for (const auto& r : DecodeReplyAllCuts(ReplyShape::kBytes, "03 00 00 00 00 00 00 00 76 61 6c"))
    CHECK(r.values == std::vector<Bytes>{"val"});
  for (const auto& r : DecodeReplyAllCuts(
           ReplyShape::kBytesList,
           "01 00 00 00 00 00 00 00 31 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 32", 3))
    CHECK(r.values == std::vector<Bytes>{"1", "", "2"});
  for (const auto& r : DecodeReplyAllCuts(ReplyShape::kQueuePop,
                                          "01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 6d")) {
    CHECK(r.number == 1);
    CHECK(r.values == std::vector<Bytes>{"m"});
  }
  for (const auto& r : DecodeReplyAllCuts(ReplyShape::kQueuePop, "00 00 00 00 00 00 00 00"))
    CHECK(r.values.empty());
  for (const auto& r : DecodeReplyAllCuts(ReplyShape::kKeyList,
                                          "01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 61"))
    CHECK(r.keys == std::vector<std::string>{"/a"});
  for (const auto& r :
       DecodeReplyAllCuts(ReplyShape::kWatchEvent,
                          "01 03 00 00 00 00 00 00 00 2f 77 6b 00 00 00 00 00 00 00 00 02 00 00 "
                          "00 00 00 00 00 76 31")) {
    CHECK(r.u8 == kKeyCreated);
    CHECK(r.keys == std::vector<std::string>{"/wk"});
    CHECK(r.values == std::vector<Bytes>{"", "v1"});
  }
}

TEST_CASE("ReplyDecoder does not trust lengths from the server", "[rendezvous][wire]") {
  ReplyDecoder decoder;
  decoder.Expect(ReplyShape::kBytes);
  auto result = decoder.Feed(FromHex("00 00 00 00 00 01 00 00"));  // ~1 TB, issue #129367
  CHECK(result.status == DecodeStatus::kMalformed);
  CHECK(decoder.error().find("value length of 1099511627776") != std::string::npos);
}

TEST_CASE("ReplyDecoder checks counts before reading the items", "[rendezvous][wire]") {
  WireLimits limits;
  limits.max_key_count = 2;
  SECTION("a MULTI_GET reply longer than the limit fails before its first byte") {
    ReplyDecoder decoder(limits);
    decoder.Expect(ReplyShape::kBytesList, 3);
    CHECK(decoder.error() == "reply list of 3 values exceeds the limit");
    auto result = decoder.Feed(FromHex("00"));
    CHECK(result.status == DecodeStatus::kMalformed);
    CHECK(result.consumed == 0);
  }
  SECTION("a LIST_KEYS count above the limit is kept in number and fails") {
    ReplyDecoder decoder(limits);
    decoder.Expect(ReplyShape::kKeyList);
    auto result = decoder.Feed(FromHex("03 00 00 00 00 00 00 00 ff"));
    CHECK(result.status == DecodeStatus::kMalformed);
    CHECK(result.consumed == 8);
    CHECK(decoder.reply().number == 3);
    CHECK(decoder.error() == "the server sent a key count of 3 (limit 2)");
    CHECK(decoder.Feed(FromHex("00")).status == DecodeStatus::kMalformed);  // stays failed
    decoder.Expect(ReplyShape::kU8);                                        // until the next reply
    CHECK(decoder.Feed(FromHex("01")).status == DecodeStatus::kComplete);
    CHECK(decoder.error().empty());
  }
  SECTION("replies without bytes complete at once") {
    ReplyDecoder decoder(limits);
    decoder.Expect(ReplyShape::kNone);
    CHECK(decoder.Feed("").status == DecodeStatus::kComplete);
    decoder.Expect(ReplyShape::kBytesList, 0);
    CHECK(decoder.Feed("").status == DecodeStatus::kComplete);
  }
}

}  // namespace
}  // namespace cpplaunch
