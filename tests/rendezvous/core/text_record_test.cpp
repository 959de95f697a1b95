#include "rendezvous/core/text_record.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

using cpplaunch::TextRecord;
using cpplaunch::TextRecordBuilder;

TEST_CASE("A text record is one key=value line per field, newlines in values as spaces",
          "[rendezvous][text_record]") {
  TextRecordBuilder builder;
  builder.Add("name", "host-a")
      .Add("detail", "line one\nline two\n")
      .AddInt("big", INT64_C(-1234567890123))
      .Add("empty", "")
      .Add("formula", "a=b");
  CHECK(builder.text() ==
        "name=host-a\ndetail=line one line two \nbig=-1234567890123\nempty=\nformula=a=b\n");

  std::string error;
  auto record = TextRecord::Parse(builder.text(), "test record", &error);
  REQUIRE(record);
  CHECK(record->Text("name") == "host-a");
  CHECK(record->Text("detail") == "line one line two ");
  CHECK(record->Text("empty").empty());
  CHECK(record->Text("formula") == "a=b");  // split at the first '='
  CHECK(record->Text("absent").empty());
  int64_t big = 0;
  CHECK(record->GetInt64("big", &big, &error));
  CHECK(big == INT64_C(-1234567890123));
}

TEST_CASE("Parsing a text record names the line without '='", "[rendezvous][text_record]") {
  std::string error;
  CHECK_FALSE(TextRecord::Parse("a=1\nno equals sign here\nb=2\n", "test record", &error));
  CHECK(error == "test record line without '=': no equals sign here");
  // Only the first 40 characters of the line are quoted.
  CHECK_FALSE(TextRecord::Parse(std::string(100, 'x'), "test record", &error));
  CHECK(error == "test record line without '=': " + std::string(40, 'x'));
  // A final line without '\n', an empty text and a repeated key are fine; the last value wins.
  auto record = TextRecord::Parse("k=1\nk=2", "test record", &error);
  REQUIRE(record);
  CHECK(record->Text("k") == "2");
  CHECK(TextRecord::Parse("", "test record", &error));
}

TEST_CASE("Integer getters name the missing or malformed field", "[rendezvous][text_record]") {
  std::string error;
  auto record =
      TextRecord::Parse("ok=42\nneg=-7\nword=x\ntrailing=12 \nplus=+1\nempty=\nhuge=9999999999\n",
                        "test record", &error);
  REQUIRE(record);
  int value = 0;
  CHECK(record->GetInt("ok", &value, &error));
  CHECK(value == 42);
  CHECK(record->GetInt("neg", &value, &error));
  CHECK(value == -7);

  for (const char* bad : {"word", "trailing", "plus", "empty", "huge"}) {
    value = 5;
    CHECK_FALSE(record->GetInt(bad, &value, &error));
    CHECK(error == std::string("test record field '") + bad + "' is not an integer");
    CHECK(value == 5);  // left alone
  }
  int64_t wide = 0;
  CHECK(record->GetInt64("huge", &wide, &error));  // fits int64 but not int
  CHECK(wide == INT64_C(9999999999));

  CHECK_FALSE(record->GetInt("absent", &value, &error));
  CHECK(error == "test record is missing 'absent'");
  CHECK_FALSE(record->GetInt64("absent", &wide, &error));
  CHECK(error == "test record is missing 'absent'");
}

TEST_CASE("Ranged getters refuse values outside their bounds, naming them",
          "[rendezvous][text_record]") {
  std::string error;
  auto record =
      TextRecord::Parse("size=4\nneg=-1\nbig=2147483648\nname=abcdef\n", "test record", &error);
  REQUIRE(record);
  int value = 0;
  CHECK(record->GetIntIn("size", 1, 8, &value, &error));
  CHECK(value == 4);
  value = 5;
  CHECK_FALSE(record->GetIntIn("size", 5, 8, &value, &error));
  CHECK(error == "test record field 'size' is 4, outside 5..8");
  CHECK(value == 5);
  CHECK_FALSE(record->GetIntIn("neg", 0, 8, &value, &error));
  CHECK(error == "test record field 'neg' is -1, outside 0..8");
  // A bound wider than int is clamped to int: the value can never be narrowed.
  CHECK_FALSE(record->GetIntIn("big", 0, INT64_MAX, &value, &error));
  CHECK(error == "test record field 'big' is 2147483648, outside 0..2147483647");
  int64_t wide = 0;
  CHECK(record->GetInt64In("big", 0, INT64_MAX, &wide, &error));
  CHECK(wide == INT64_C(2147483648));
  CHECK_FALSE(record->GetInt64In("absent", 0, 1, &wide, &error));
  CHECK(error == "test record is missing 'absent'");

  std::string text;
  CHECK(record->GetText("name", 6, &text, &error));
  CHECK(text == "abcdef");
  CHECK(record->GetText("absent", 0, &text, &error));
  CHECK(text.empty());
  CHECK_FALSE(record->GetText("name", 5, &text, &error));
  CHECK(error == "test record field 'name' is 6 bytes long, more than 5");
}
