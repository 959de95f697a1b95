#include "rendezvous/store/wire/field_reader.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using test::FromHex;

struct Message {
  std::vector<std::string> keys;
  std::vector<Bytes> values;
  int64_t number = 0;
  uint32_t u32 = 0;
  uint8_t u8 = 0;
  FieldTarget target() { return {&keys, &values, &number, &u32, &u8}; }
};

// u8 7 | u32 5 | key "k" | 2 pairs (a=1, b="") | i64 -2
constexpr Field kProgram[] = {Field::kU8,       Field::kU32, Field::kKey,
                              Field::kPairList, Field::kI64, Field::kEnd};
const char* const kBytes =
    "07 05 00 00 00 01 00 00 00 00 00 00 00 6b 02 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 "
    "61 01 00 00 00 00 00 00 00 31 01 00 00 00 00 00 00 00 62 00 00 00 00 00 00 00 00 fe ff ff "
    "ff ff ff ff ff";

void CheckMessage(const Message& m) {
  CHECK(m.u8 == 7);
  CHECK(m.u32 == 5);
  CHECK(m.keys == std::vector<std::string>{"k", "a", "b"});
  CHECK(m.values == std::vector<Bytes>{"1", ""});
  CHECK(m.number == -2);
}

TEST_CASE("FieldReader runs a program over input cut anywhere", "[rendezvous][wire]") {
  const std::string bytes = FromHex(kBytes);
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    INFO("cut at " << cut);
    Message m;
    FieldReader reader(WireLimits{});
    reader.Start(kProgram, m.target());
    std::string_view all(bytes);
    DecodeResult first = reader.Feed(all.substr(0, cut));
    if (first.status == DecodeStatus::kNeedMore) {
      REQUIRE(first.consumed == cut);
      DecodeResult second = reader.Feed(all.substr(cut));
      REQUIRE(second.status == DecodeStatus::kComplete);
      REQUIRE(second.consumed == bytes.size() - cut);
    } else {
      REQUIRE(first.status == DecodeStatus::kComplete);
      REQUIRE(first.consumed == bytes.size());
    }
    CheckMessage(m);
  }
}

TEST_CASE("FieldReader stops at the end of the program", "[rendezvous][wire]") {
  Message m;
  FieldReader reader(WireLimits{});
  reader.Start(kProgram, m.target());
  const std::string bytes = FromHex(kBytes) + "xyz";
  DecodeResult result = reader.Feed(bytes);
  CHECK(result.status == DecodeStatus::kComplete);
  CHECK(result.consumed == bytes.size() - 3);
  CHECK(reader.Feed("more").consumed == 0);
}

TEST_CASE("FieldReader reports the limit a prefix breaks", "[rendezvous][wire]") {
  WireLimits limits;
  limits.max_key_bytes = 4;
  limits.max_value_bytes = 8;
  limits.max_key_count = 2;
  limits.max_request_bytes = 10;
  Message m;
  FieldReader reader(limits);
  SECTION("a key too long") {
    reader.Start(kProgram, m.target());
    auto result = reader.Feed(FromHex("07 05 00 00 00 05 00 00 00 00 00 00 00 6b"));
    CHECK(result.status == DecodeStatus::kMalformed);
    CHECK(result.consumed == 13);  // the length prefix, not the key byte after it
    CHECK(reader.error() == FieldError::kKeyLength);
    CHECK(reader.error_value() == 5);
    CHECK(m.keys.empty());
  }
  SECTION("too many pairs") {
    constexpr Field program[] = {Field::kPairList, Field::kEnd};
    reader.Start(program, m.target());
    CHECK(reader.Feed(FromHex("03 00 00 00 00 00 00 00")).status == DecodeStatus::kMalformed);
    CHECK(reader.error() == FieldError::kCount);
    CHECK(reader.error_value() == 3);
  }
  SECTION("keys and values above the message cap") {
    constexpr Field program[] = {Field::kKey, Field::kValue, Field::kEnd};
    reader.Start(program, m.target());
    auto result =
        reader.Feed(FromHex("04 00 00 00 00 00 00 00 6b 6b 6b 6b 07 00 00 00 00 00 00 00"));
    CHECK(result.status == DecodeStatus::kMalformed);
    CHECK(reader.error() == FieldError::kMessageBytes);
    CHECK(reader.error_value() == 7);
  }
  SECTION("Start clears a failure") {
    reader.Start(kProgram, m.target());
    reader.Feed(FromHex("07 05 00 00 00 ff 00 00 00 00 00 00 00"));
    REQUIRE(reader.error() == FieldError::kKeyLength);
    constexpr Field program[] = {Field::kU8, Field::kEnd};
    reader.Start(program, m.target());
    CHECK(reader.error() == FieldError::kNone);
    CHECK(reader.Feed(FromHex("09")).status == DecodeStatus::kComplete);
    CHECK(m.u8 == 9);
  }
}

TEST_CASE("FieldReader fields that take no bytes of their own", "[rendezvous][wire]") {
  Message m;
  FieldReader reader(WireLimits{});
  SECTION("expected values") {
    constexpr Field program[] = {Field::kExpectedValues, Field::kEnd};
    reader.Start(program, m.target(), 2);
    auto result = reader.Feed(FromHex("00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 7a"));
    CHECK(result.status == DecodeStatus::kComplete);
    CHECK(m.values == std::vector<Bytes>{"", "z"});
    reader.Start(program, m.target(), 0);
    CHECK(reader.Feed("").status == DecodeStatus::kComplete);
  }
  SECTION("an optional value is absent when the count is not positive") {
    constexpr Field program[] = {Field::kOptionalValue, Field::kEnd};
    reader.Start(program, m.target());
    CHECK(reader.Feed(FromHex("ff ff ff ff ff ff ff ff")).status == DecodeStatus::kComplete);
    CHECK(m.number == -1);
    CHECK(m.values.empty());
  }
}

}  // namespace
}  // namespace cpplaunch
