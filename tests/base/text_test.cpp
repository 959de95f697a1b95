#include "base/text.h"

#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

using cpplaunch::HumanBytes;
using cpplaunch::IsDigit;
using cpplaunch::Join;
using cpplaunch::ParsePythonFloat;
using cpplaunch::ParsePythonInt;
using cpplaunch::Split;
using cpplaunch::Strip;
using cpplaunch::ToInt;

TEST_CASE("Strip drops Python's whitespace at both ends only") {
  CHECK(Strip("  a b\t\n") == "a b");
  CHECK(Strip("\f\v\r") == "");
  CHECK(Strip("") == "");
  CHECK(Strip("x") == "x");
}

TEST_CASE("Split keeps empty pieces as Python's str.split(sep) does") {
  using V = std::vector<std::string_view>;
  CHECK(Split("", ',') == V{""});
  CHECK(Split("a", ',') == V{"a"});
  CHECK(Split("a,,b", ',') == V{"a", "", "b"});
  CHECK(Split(",a,", ',') == V{"", "a", ""});
}

TEST_CASE("Join puts the separator between every two pieces as Python's str.join does") {
  using V = std::vector<std::string>;
  CHECK(Join(V{}, ", ") == "");
  CHECK(Join(V{"a"}, ", ") == "a");
  CHECK(Join(V{"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(Join(V{"", "a", ""}, ",") == ",a,");  // empty pieces keep their separators
  CHECK(Join(V{"a", "b"}, "") == "ab");
}

TEST_CASE("IsDigit takes the ASCII decimal digits only") {
  for (char c = '0'; c <= '9'; ++c) CHECK(IsDigit(c));
  CHECK_FALSE(IsDigit('/'));  // the neighbours of '0' and '9'
  CHECK_FALSE(IsDigit(':'));
  CHECK_FALSE(IsDigit('a'));
  CHECK_FALSE(IsDigit(' '));
  CHECK_FALSE(IsDigit(static_cast<char>(0xB2)));  // Latin-1 superscript two
}

TEST_CASE("ParsePythonInt reads int(text)") {
  CHECK(ParsePythonInt(" 42 ") == 42);
  CHECK(ParsePythonInt("+7") == 7);
  CHECK(ParsePythonInt("-1_000") == -1000);
  CHECK(ParsePythonInt("9223372036854775807") == std::numeric_limits<long long>::max());
  CHECK(ParsePythonInt("-9223372036854775808") == std::numeric_limits<long long>::min());
  CHECK_FALSE(ParsePythonInt("9223372036854775808"));
  CHECK_FALSE(ParsePythonInt("1__0"));
  CHECK_FALSE(ParsePythonInt("_1"));
  CHECK_FALSE(ParsePythonInt("1_"));
  CHECK_FALSE(ParsePythonInt(""));
  CHECK_FALSE(ParsePythonInt("-"));
  CHECK_FALSE(ParsePythonInt("0x10"));
  CHECK_FALSE(ParsePythonInt("1.0"));
}

TEST_CASE("ParsePythonFloat reads float(text) without hexadecimal forms") {
  CHECK(ParsePythonFloat(" 1.5 ") == 1.5);
  CHECK(ParsePythonFloat("1_0.5") == 10.5);
  CHECK(ParsePythonFloat("1e3") == 1000.0);
  CHECK_FALSE(ParsePythonFloat("0x1p3"));
  CHECK_FALSE(ParsePythonFloat("1.5s"));
  CHECK_FALSE(ParsePythonFloat(""));
}

TEST_CASE("ToInt keeps values that fit in an int") {
  CHECK(ToInt(2147483647LL) == 2147483647);
  CHECK_FALSE(ToInt(2147483648LL));
  CHECK_FALSE(ToInt(std::nullopt));
}

namespace cpplaunch {
namespace {

std::optional<std::string> Vars(std::string_view name) {
  if (name == "a") return std::string("1");
  if (name == "ab") return std::string("2");
  return std::nullopt;
}

TEST_CASE("SafeSubstitute follows Python's string.Template.safe_substitute") {
  CHECK(SafeSubstitute("x$a.${ab}y", Vars) == "x1.2y");
  CHECK(SafeSubstitute("$ab$a", Vars) == "21");                 // the longest identifier
  CHECK(SafeSubstitute("$abc ${abc}", Vars) == "$abc ${abc}");  // unknown: verbatim
  CHECK(SafeSubstitute("$$a", Vars) == "$a");                   // escaped dollar
  CHECK(SafeSubstitute("cost $5 $", Vars) == "cost $5 $");      // no identifier: kept
  CHECK(SafeSubstitute("${a", Vars) == "${a");                  // unclosed brace: kept
  CHECK(SafeSubstitute("${}", Vars) == "${}");
  CHECK(SafeSubstitute("${ a}", Vars) == "${ a}");
  CHECK(SafeSubstitute("$_a1", Vars) == "$_a1");
  CHECK(SafeSubstitute("", Vars).empty());
  CHECK(SafeSubstitute("$\xc3\xa9", Vars) == "$\xc3\xa9");  // ASCII identifiers only
}

}  // namespace
}  // namespace cpplaunch

TEST_CASE("HumanBytes writes bytes in binary units with one decimal") {
  CHECK(HumanBytes(512) == "512 B");
  CHECK(HumanBytes(1536) == "1.5 KiB");
  CHECK(HumanBytes(64ull << 20) == "64.0 MiB");
  CHECK(HumanBytes(3ull << 29) == "1.5 GiB");
}

TEST_CASE("FormatTenths writes a duration to a tenth of a second, past 10 s too") {
  using namespace std::chrono_literals;
  CHECK(cpplaunch::FormatTenths(1s) == "1.0 s");
  CHECK(cpplaunch::FormatTenths(1449ms) == "1.4 s");
  CHECK(cpplaunch::FormatTenths(12300ms) == "12.3 s");
}
