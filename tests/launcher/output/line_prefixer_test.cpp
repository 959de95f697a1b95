#include "launcher/output/line_prefixer.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

std::string FeedAll(LinePrefixer& prefixer, std::string_view bytes) {
  std::string out;
  prefixer.Feed(bytes, out);
  return out;
}

}  // namespace

TEST_CASE("FormatLinePrefix is torchrun's [role<local_rank>]: without a template",
          "[launcher][prefix]") {
  CHECK(FormatLinePrefix(std::nullopt, "default", 7, 3) == "[default3]:");
  CHECK(FormatLinePrefix(std::nullopt, "trainer", 0, 0) == "[trainer0]:");
}

TEST_CASE("FormatLinePrefix substitutes a template as Python's safe_substitute",
          "[launcher][prefix]") {
  CHECK(FormatLinePrefix("[${rank}]:", "default", 12, 3) == "[12]:");
  CHECK(FormatLinePrefix("$role_name-$local_rank|${rank}", "trainer", 5, 1) == "trainer-1|5");
  CHECK(FormatLinePrefix("$$rank $other ${other} $ ${rank $9", "r", 5, 1) ==
        "$rank $other ${other} $ ${rank $9");
}

TEST_CASE("FormatLinePrefix treats an empty template as none, as torchrun's truth test does",
          "[launcher][prefix]") {
  // torch 2.6's LocalElasticAgent: `if self._log_line_prefix_template:` ("" is false).
  CHECK(FormatLinePrefix("", "r", 5, 1) == "[r1]:");
}

TEST_CASE("LinePrefixer prefixes every complete line of one chunk", "[launcher][prefix]") {
  LinePrefixer prefixer("[default0]:");
  CHECK(FeedAll(prefixer, "hello\nworld\n\nlast\n") ==
        "[default0]:hello\n[default0]:world\n[default0]:\n[default0]:last\n");
  CHECK_FALSE(prefixer.has_partial());
}

TEST_CASE("LinePrefixer keeps a partial line until the newline arrives", "[launcher][prefix]") {
  LinePrefixer prefixer("[p1]:");
  CHECK(FeedAll(prefixer, "abc") == "");
  CHECK(prefixer.has_partial());
  CHECK(FeedAll(prefixer, "def") == "");
  CHECK(FeedAll(prefixer, "g\nh") == "[p1]:abcdefg\n");
  CHECK(FeedAll(prefixer, "\n") == "[p1]:h\n");
  CHECK_FALSE(prefixer.has_partial());
}

TEST_CASE("LinePrefixer gives the same lines whatever the chunk boundaries", "[launcher][prefix]") {
  const std::string input = "first line\n\nthird\r\nfourth has more words\nx\npartial tail";
  const std::string expected =
      "[w]:first line\n[w]:\n[w]:third\r\n[w]:fourth has more words\n[w]:x\n[w]:partial tail\n";
  for (std::size_t split = 0; split <= input.size(); ++split) {
    for (std::size_t second = split; second <= input.size(); ++second) {
      LinePrefixer prefixer("[w]:");
      std::string out;
      prefixer.Feed(std::string_view(input).substr(0, split), out);
      prefixer.Feed(std::string_view(input).substr(split, second - split), out);
      prefixer.Feed(std::string_view(input).substr(second), out);
      prefixer.Flush(out);
      INFO("split at " << split << " and " << second);
      REQUIRE(out == expected);
    }
  }
  LinePrefixer bytewise("[w]:");
  std::string out;
  for (char c : input) bytewise.Feed(std::string_view(&c, 1), out);
  bytewise.Flush(out);
  CHECK(out == expected);
}

TEST_CASE("LinePrefixer Flush emits a partial last line with an added newline, once",
          "[launcher][prefix]") {
  LinePrefixer prefixer("[default1]:");
  std::string out;
  prefixer.Feed("done\ncrashed mid-li", out);
  prefixer.Flush(out);
  CHECK(out == "[default1]:done\n[default1]:crashed mid-li\n");
  out.clear();
  prefixer.Flush(out);
  CHECK(out.empty());
}

TEST_CASE("LinePrefixer cuts a line that grows past the limit into prefixed pieces",
          "[launcher][prefix]") {
  LinePrefixer prefixer("[p]:", 4);
  std::string out;
  prefixer.Feed("abcdefghij", out);
  CHECK(out == "[p]:abcd\n[p]:efgh\n");
  prefixer.Feed("k\n", out);
  CHECK(out == "[p]:abcd\n[p]:efgh\n[p]:ijk\n");
}

TEST_CASE("LinePrefixer passes long lines and many lines per chunk intact", "[launcher][prefix]") {
  std::string input;
  std::string expected;
  for (int i = 0; i < 5000; ++i) {
    std::string line = std::to_string(i) + std::string(static_cast<std::size_t>(i % 300), 'x');
    input += line + "\n";
    expected += "[default12]:" + line + "\n";
  }
  const std::string long_line(300000, 'L');
  input += long_line + "\n";
  expected += "[default12]:" + long_line + "\n";
  LinePrefixer prefixer("[default12]:");
  std::string out;
  for (std::size_t pos = 0; pos < input.size(); pos += 65536) {
    prefixer.Feed(std::string_view(input).substr(pos, 65536), out);
  }
  CHECK_FALSE(prefixer.has_partial());
  CHECK(out == expected);
}

}  // namespace cpplaunch
