#include "launcher/manual/man_page.h"

#include <catch2/catch.hpp>

#include "launcher/cli/help_text.h"
#include "launcher/cli/option_table.h"

namespace cpplaunch {
namespace {

TEST_CASE("roff escaping: minus signs, backslashes, a leading control character") {
  CHECK(RoffEscape("--nproc-per-node") == "\\-\\-nproc\\-per\\-node");
  CHECK(RoffEscape("a\\b") == "a\\eb");
  CHECK(RoffEscape(".hidden") == "\\&.hidden");
  CHECK(RoffEscape("'quoted'") == "\\&'quoted'");
  CHECK(RoffEscape("rank 0's") == "rank 0's");
  CHECK(RoffEscape("") == "");
}

TEST_CASE("the man page lists every option of the table, in the table's order, as --help does") {
  const std::string page = ManPage("9.8.7");
  CHECK(page.starts_with(".TH CPPLAUNCH 1 \"\" \"cpplaunch 9.8.7\" \"User Commands\"\n"));
  size_t previous = page.find(".SH OPTIONS");
  REQUIRE(previous != std::string::npos);
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    std::string spellings = "\\fB" + RoffEscape(spec.name) + "\\fR";
    if (!spec.alias.empty()) spellings += ", \\fB" + RoffEscape(spec.alias) + "\\fR";
    if (TakesValue(spec)) spellings += " \\fIVALUE\\fR";
    const size_t at = page.find(spellings + "\n" + RoffEscape(spec.help) + "\n");
    CHECK(at != std::string::npos);
    CHECK(at > previous);
    previous = at;
    if (!spec.short_name.empty()) {
      const std::string with_short = "\\fB" + RoffEscape(spec.short_name) + "\\fR, " + spellings;
      CHECK(page.find(with_short) == at - (with_short.size() - spellings.size()));
    }
    const std::string details = OptionDetails(spec);
    if (!details.empty())
      CHECK(page.find("(" + RoffEscape(details) + ")", at) != std::string::npos);
  }
  CHECK(page.find(".SH ENVIRONMENT", previous) != std::string::npos);
  CHECK(page.find(".SH EXIT STATUS") != std::string::npos);
  CHECK(page.find("/usr/lib/cpplaunch/bin/torchrun") != std::string::npos);
  // Every rendezvous backend a multi-host job can use is named, the etcd one included.
  CHECK(page.find("static, c10d or etcd\\-v3 rendezvous") != std::string::npos);
  CHECK(page.find(".B TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT") != std::string::npos);
  CHECK(page.find(".B TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE") != std::string::npos);
}

TEST_CASE("no line of the page is read as a roff request by accident") {
  const std::string page = ManPage("1");
  size_t start = 0;
  while (start < page.size()) {
    const size_t end = page.find('\n', start);
    const std::string line = page.substr(start, end - start);
    INFO(line);
    if (line.starts_with(".") || line.starts_with("'")) {
      // Only the requests the page uses.
      const std::string request = line.substr(0, line.find(' '));
      CHECK((request == ".TH" || request == ".SH" || request == ".TP" || request == ".B" ||
             request == ".BR" || request == ".I" || request == ".PP" || request == ".br" ||
             request == ".nf" || request == ".fi" || request == ".nh" || request == ".ad"));
    }
    start = end + 1;
  }
}

}  // namespace
}  // namespace cpplaunch
