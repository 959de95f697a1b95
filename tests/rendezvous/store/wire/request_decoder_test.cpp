#include "rendezvous/store/wire/request_decoder.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rendezvous/store/wire/reply_codec.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using test::FromHex;
using test::ToHex;

// A readable one-line form of a request, to compare decoder output.
std::string Describe(const Request& request) {
  std::string text = CommandName(request.command);
  for (const auto& key : request.keys) text += " k=" + ToHex(key);
  for (const auto& value : request.values) text += " v=" + ToHex(value);
  text += " n=" + std::to_string(request.number) + " u=" + std::to_string(request.u32);
  return text;
}

Request Make(Command command, std::vector<std::string> keys = {}, std::vector<Bytes> values = {},
             int64_t number = 0, uint32_t u32 = 0) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  request.number = number;
  request.u32 = u32;
  return request;
}

struct Vector {
  const char* hex;
  Request request;
};

// Section 7.2 / tcpstore-vectors-modern.txt, in order (VALIDATE first).
std::vector<Vector> ModernVectors() {
  return {
      {"00 ce f7 85 3c", Make(Command::kValidate, {}, {}, 0, kValidateMagic)},
      {"0d 39 30 00 00", Make(Command::kPing, {}, {}, 0, 12345)},
      {"04 05 00 00 00 00 00 00 00 69 6e 69 74 2f 01 00 00 00 00 00 00 00",
       Make(Command::kAdd, {"init/"}, {}, 1)},
      {"01 04 00 00 00 00 00 00 00 2f 6b 65 79 03 00 00 00 00 00 00 00 76 61 6c",
       Make(Command::kSet, {"/key"}, {"val"})},
      {"06 01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79",
       Make(Command::kWait, {"/key"})},
      {"03 04 00 00 00 00 00 00 00 2f 6b 65 79", Make(Command::kGet, {"/key"})},
      {"05 02 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79 03 00 00 00 00 00 00 00 "
       "2f 6e 6f",
       Make(Command::kCheck, {"/key", "/no"})},
      {"07", Make(Command::kGetNumKeys)},
      {"08 04 00 00 00 00 00 00 00 2f 6b 65 79", Make(Command::kDeleteKey, {"/key"})},
      {"02 02 00 00 00 00 00 00 00 2f 63 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 41",
       Make(Command::kCompareSet, {"/c"}, {"", "A"})},
      {"09 02 00 00 00 00 00 00 00 2f 6c 02 00 00 00 00 00 00 00 78 79",
       Make(Command::kAppend, {"/l"}, {"xy"})},
      {"0b 02 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 61 01 00 00 00 00 00 00 00 31 02 "
       "00 00 00 00 00 00 00 2f 62 01 00 00 00 00 00 00 00 32",
       Make(Command::kMultiSet, {"/a", "/b"}, {"1", "2"})},
      {"0a 02 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 61 02 00 00 00 00 00 00 00 2f 62",
       Make(Command::kMultiGet, {"/a", "/b"})},
      {"06 01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 78", Make(Command::kWait, {"/x"})},
      {"0c", Make(Command::kCancelWait)},
      {"0e 02 00 00 00 00 00 00 00 2f 71 01 00 00 00 00 00 00 00 6d",
       Make(Command::kQueuePush, {"/q"}, {"m"})},
      {"10 02 00 00 00 00 00 00 00 2f 71", Make(Command::kQueueLen, {"/q"})},
      {"0f 02 00 00 00 00 00 00 00 2f 71", Make(Command::kQueuePop, {"/q"})},
      {"11", Make(Command::kListKeys)},
      {"12 04 00 00 00 00 00 00 00 2f 62 61 72 02 00 00 00 00 00 00 00",
       Make(Command::kBarrier, {"/bar"}, {}, 2)},
  };
}

// Section 7.1 (captured from 1.13), in order.
std::vector<Vector> LegacyVectors() {
  return {
      {"00 04 00 00 00 00 00 00 00 2f 6b 65 79 03 00 00 00 00 00 00 00 76 61 6c",
       Make(Command::kSet, {"/key"}, {"val"})},
      {"05 01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79",
       Make(Command::kWait, {"/key"})},
      {"02 04 00 00 00 00 00 00 00 2f 6b 65 79", Make(Command::kGet, {"/key"})},
      {"03 05 00 00 00 00 00 00 00 69 6e 69 74 2f 01 00 00 00 00 00 00 00",
       Make(Command::kAdd, {"init/"}, {}, 1)},
      {"01 04 00 00 00 00 00 00 00 2f 63 61 73 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 "
       "41",
       Make(Command::kCompareSet, {"/cas"}, {"", "A"})},
      {"04 02 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79 04 00 00 00 00 00 00 00 "
       "2f 6e 6f 6e",
       Make(Command::kCheck, {"/key", "/non"})},
      {"06", Make(Command::kGetNumKeys)},
      {"08 04 00 00 00 00 00 00 00 2f 6b 65 79", Make(Command::kDeleteKey, {"/key"})},
      {"07 03 00 00 00 00 00 00 00 2f 77 6b", Make(Command::kWatchKey, {"/wk"})},
  };
}

std::string Concat(const std::vector<Vector>& vectors) {
  std::string stream;
  for (const auto& vector : vectors) stream += FromHex(vector.hex);
  return stream;
}

// Feeds `chunks` one after another and returns every decoded request, or "MALFORMED: ...".
std::vector<std::string> DecodeChunks(const std::vector<std::string_view>& chunks,
                                      WireLimits limits = {}) {
  RequestDecoder decoder(limits);
  std::vector<std::string> out;
  for (std::string_view chunk : chunks) {
    while (true) {
      DecodeResult result = decoder.Feed(chunk);
      REQUIRE(result.consumed <= chunk.size());
      chunk.remove_prefix(result.consumed);
      if (result.status == DecodeStatus::kMalformed) {
        out.push_back("MALFORMED: " + decoder.error());
        return out;
      }
      if (result.status == DecodeStatus::kNeedMore) {
        REQUIRE(chunk.empty());
        break;
      }
      out.push_back(Describe(decoder.request()));
    }
  }
  return out;
}

std::vector<std::string> Expected(const std::vector<Vector>& vectors) {
  std::vector<std::string> out;
  for (const auto& vector : vectors) out.push_back(Describe(vector.request));
  return out;
}

TEST_CASE("RequestDecoder decodes every modern vector byte for byte", "[rendezvous][wire]") {
  auto vectors = ModernVectors();
  for (const auto& vector : vectors) {
    INFO(vector.hex);
    RequestDecoder decoder;
    if (vector.request.command != Command::kValidate) decoder.Feed(FromHex("00 ce f7 85 3c"));
    std::string bytes = FromHex(vector.hex);
    DecodeResult result = decoder.Feed(bytes);
    REQUIRE(result.status == DecodeStatus::kComplete);
    CHECK(result.consumed == bytes.size());
    CHECK(Describe(decoder.request()) == Describe(vector.request));
    CHECK(decoder.dialect() == Dialect::kModern);
    std::string encoded;
    REQUIRE(EncodeRequest(Dialect::kModern, vector.request, &encoded));
    CHECK(ToHex(encoded) == ToHex(bytes));
  }
}

TEST_CASE("RequestDecoder decodes every legacy vector byte for byte", "[rendezvous][wire]") {
  for (const auto& vector : LegacyVectors()) {
    INFO(vector.hex);
    RequestDecoder decoder;
    std::string bytes = FromHex(vector.hex);
    DecodeResult result = decoder.Feed(bytes);
    REQUIRE(result.status == DecodeStatus::kComplete);
    CHECK(result.consumed == bytes.size());
    CHECK(Describe(decoder.request()) == Describe(vector.request));
    CHECK(decoder.dialect() == Dialect::kLegacy);
    std::string encoded;
    REQUIRE(EncodeRequest(Dialect::kLegacy, vector.request, &encoded));
    CHECK(ToHex(encoded) == ToHex(bytes));
  }
}

TEST_CASE("RequestDecoder gives the same requests however the stream is split",
          "[rendezvous][wire]") {
  for (const auto& vectors : {ModernVectors(), LegacyVectors()}) {
    std::string stream = Concat(vectors);
    auto expected = Expected(vectors);
    REQUIRE(DecodeChunks({stream}) == expected);  // many requests in one read
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      std::string_view all(stream);
      INFO("cut at " << cut);
      REQUIRE(DecodeChunks({all.substr(0, cut), all.substr(cut)}) == expected);
    }
    for (size_t a = 0; a < stream.size(); a += 3) {
      for (size_t b = a; b < stream.size(); b += 7) {
        std::string_view all(stream);
        REQUIRE(DecodeChunks({all.substr(0, a), all.substr(a, b - a), all.substr(b)}) == expected);
      }
    }
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < stream.size(); ++i)
      bytes.push_back(std::string_view(stream).substr(i, 1));
    REQUIRE(DecodeChunks(bytes) == expected);
  }
}

TEST_CASE("RequestDecoder tells the dialect from the first bytes", "[rendezvous][wire]") {
  SECTION("an idle connection stays undecided") {
    RequestDecoder decoder;
    CHECK(decoder.Feed("").status == DecodeStatus::kNeedMore);
    CHECK(decoder.dialect() == Dialect::kUndecided);
  }
  SECTION("a leading zero waits for five bytes") {
    RequestDecoder decoder;
    auto result = decoder.Feed(FromHex("00 ce f7 85"));
    CHECK(result.status == DecodeStatus::kNeedMore);
    CHECK(result.consumed == 4);
    CHECK(decoder.dialect() == Dialect::kUndecided);
    CHECK(decoder.Feed(FromHex("3c")).status == DecodeStatus::kComplete);
    CHECK(decoder.dialect() == Dialect::kModern);
  }
  SECTION("a leading zero without the magic is a legacy SET") {
    auto out = DecodeChunks({FromHex("00 04 00 00"), FromHex("00 00 00 00 00 2f 6b 65 79"),
                             FromHex("03 00 00 00 00 00 00 00 76 61 6c")});
    REQUIRE(out.size() == 1);
    CHECK(out[0] == Describe(Make(Command::kSet, {"/key"}, {"val"})));
  }
  SECTION("a non-zero first byte is legacy") {
    RequestDecoder decoder;
    REQUIRE(decoder.Feed(FromHex("06")).status == DecodeStatus::kComplete);
    CHECK(decoder.dialect() == Dialect::kLegacy);
    CHECK(decoder.request().command == Command::kGetNumKeys);
  }
  SECTION("legacy understands the mid-2023 additions") {
    auto out = DecodeChunks({FromHex("06 0c")});
    REQUIRE(out.size() == 2);
    CHECK(out[1] == Describe(Make(Command::kCancelWait)));
  }
}

TEST_CASE("RequestDecoder rejects unknown and misplaced commands", "[rendezvous][wire]") {
  CHECK(DecodeChunks({FromHex("0d")}).back().starts_with("MALFORMED: unknown command byte 0x0d"));
  CHECK(DecodeChunks({FromHex("ff")}).back().starts_with("MALFORMED"));
  CHECK(DecodeChunks({FromHex("00 ce f7 85 3c 13")}).back().starts_with("MALFORMED"));
  auto twice = DecodeChunks({FromHex("00 ce f7 85 3c 07 00 ce f7 85 3c")});
  REQUIRE(twice.size() == 3);
  CHECK(twice[2].starts_with("MALFORMED"));  // VALIDATE is only valid first
  RequestDecoder decoder;
  REQUIRE(decoder.Feed(FromHex("63")).status == DecodeStatus::kMalformed);
  CHECK(decoder.Feed(FromHex("06")).status == DecodeStatus::kMalformed);  // stays failed
}

TEST_CASE("RequestDecoder checks caps from the length prefix before storing anything",
          "[rendezvous][wire]") {
  WireLimits limits;
  limits.max_key_bytes = 16;
  limits.max_value_bytes = 32;
  limits.max_key_count = 3;
  limits.max_request_bytes = 40;
  SECTION("a 2^62 key length") {
    auto out = DecodeChunks({FromHex("02 00 00 00 00 00 00 00 40")}, limits);
    CHECK(out.back().find("key length 4611686018427387904 exceeds") != std::string::npos);
  }
  SECTION("a 1 GiB value followed by silence") {
    auto out =
        DecodeChunks({FromHex("00 02 00 00 00 00 00 00 00 2f 61 00 00 00 40 00 00 00 00")}, limits);
    CHECK(out.back().find("value length 1073741824 exceeds the limit of 32") != std::string::npos);
  }
  SECTION("too many keys") {
    auto out = DecodeChunks({FromHex("05 04 00 00 00 00 00 00 00")}, limits);
    CHECK(out.back().find("key count 4 exceeds") != std::string::npos);
  }
  SECTION("keys at the cap pass") {
    limits.max_request_bytes = 48;
    std::string key(16, 'k');
    Request request = Make(Command::kCheck, {key, key, key});
    std::string bytes;
    EncodeRequest(Dialect::kLegacy, request, &bytes);
    CHECK(DecodeChunks({bytes}, limits) == std::vector<std::string>{Describe(request)});
  }
  SECTION("the whole request is capped too") {
    Request request = Make(Command::kMultiSet, {"a", "b"}, {std::string(31, 'x'), "yyyyyyyy"});
    std::string bytes;
    EncodeRequest(Dialect::kLegacy, request, &bytes);
    CHECK(DecodeChunks({bytes}, limits).back().find("request larger") != std::string::npos);
  }
  SECTION("a partial huge-but-allowed value is kept only as far as it arrived") {
    WireLimits big;
    RequestDecoder decoder(big);
    std::string head = FromHex("00 01 00 00 00 00 00 00 00 6b 00 00 80 00 00 00 00 00");  // 8 MiB
    REQUIRE(decoder.Feed(head).status == DecodeStatus::kNeedMore);
    REQUIRE(decoder.Feed(std::string(100, 'x')).status == DecodeStatus::kNeedMore);
    CHECK(decoder.request().values.at(0).capacity() < 4096);
  }
}

}  // namespace
}  // namespace cpplaunch
