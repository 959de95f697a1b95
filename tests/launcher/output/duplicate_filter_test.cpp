#include "launcher/output/duplicate_filter.h"

#include <catch2/catch.hpp>

namespace cpplaunch {

TEST_CASE("DuplicateFilter matches a substring of the line's text", "[output][filters]") {
  DuplicateFilter filter({"loss", "ERROR, bad"});
  CHECK(filter.Matches("step 3 loss=0.2"));
  CHECK(filter.Matches("ERROR, bad input"));
  CHECK_FALSE(filter.Matches("ERROR bad input"));
  CHECK_FALSE(filter.Matches("Loss"));  // case-sensitive, as Python's `in`
  CHECK(DuplicateFilter({""}).Matches("anything"));
  CHECK_FALSE(DuplicateFilter({}).Matches("anything"));
}

TEST_CASE("DuplicateFilter::Select keeps whole prefixed lines and tests the text only",
          "[output][filters]") {
  DuplicateFilter filter({"loss", "default"});
  std::string out;
  filter.Select("[default0]:loss 1\n[default0]:other\n[default0]:x loss\n", 11, out);
  // "default" is in every prefix but in no text: the prefix is not searched.
  CHECK(out == "[default0]:loss 1\n[default0]:x loss\n");
  out.clear();
  filter.Select("[default1]:\n", 11, out);
  CHECK(out.empty());
  filter.Select("[default1]:loss without newline", 11, out);
  CHECK(out == "[default1]:loss without newline");
}

}  // namespace cpplaunch
