#include "launcher/status_tool/status_args.h"

#include <catch2/catch.hpp>
#include <initializer_list>
#include <vector>

using cpplaunch::status::ParsedStatusArgs;
using cpplaunch::status::ParseStatusArgs;

namespace {

ParsedStatusArgs Parse(std::initializer_list<std::string_view> words) {
  std::vector<std::string_view> list(words);
  return ParseStatusArgs(list);
}

}  // namespace

TEST_CASE("ParseStatusArgs reads addresses and the defaults", "[status_tool]") {
  auto parsed = Parse({"10.0.0.1:8000", "[::1]:9000"});
  REQUIRE(parsed.args);
  CHECK(parsed.args->addresses == std::vector<std::string>{"10.0.0.1:8000", "[::1]:9000"});
  CHECK_FALSE(parsed.args->json);
  CHECK_FALSE(parsed.args->watch_seconds);
  CHECK(parsed.args->silent_after_seconds == 60);
  CHECK(parsed.args->timeout_seconds == 2);
  CHECK(parsed.args->secret_file.empty());
}

TEST_CASE("ParseStatusArgs reads every option in both spellings", "[status_tool]") {
  auto parsed = Parse(
      {"--json", "h:1", "--watch", "--secret-file", "/s", "--silent-after=5", "--timeout", "0.5"});
  REQUIRE(parsed.args);
  CHECK(parsed.args->json);
  CHECK(parsed.args->watch_seconds == 2);
  CHECK(parsed.args->secret_file == "/s");
  CHECK(parsed.args->silent_after_seconds == 5);
  CHECK(parsed.args->timeout_seconds == 0.5);
  CHECK(Parse({"h:1", "--watch=0.25"}).args->watch_seconds == 0.25);
  CHECK(Parse({"h:1", "--secret-file=/t"}).args->secret_file == "/t");
}

TEST_CASE("ParseStatusArgs stops at --help and --version", "[status_tool]") {
  CHECK(Parse({"--bogus", "--help"}).args->help);
  CHECK(Parse({"-h"}).args->help);
  CHECK(Parse({"--version"}).args->version);
}

TEST_CASE("ParseStatusArgs says what is wrong in one line", "[status_tool]") {
  CHECK(Parse({}).error == "give at least one agent's status address HOST:PORT (see --help)");
  CHECK(Parse({"h:1", "--bogus"}).error == "unknown option --bogus (see --help)");
  CHECK(Parse({"h:1", "--json=yes"}).error == "unknown option --json=yes (see --help)");
  CHECK(Parse({"host"}).error == "'host' is not an agent's status address HOST:PORT");
  CHECK(Parse({"h:1", "--watch", "5"}).error ==
        "'5' is not an agent's status address HOST:PORT (--watch takes its value as "
        "--watch=SECONDS)");
  CHECK(Parse({"h:1", "--timeout"}).error == "--timeout needs a value");
  CHECK(Parse({"h:1", "--timeout", "0"}).error ==
        "--timeout: '0' is not a positive number of "
        "seconds");
  CHECK(Parse({"h:1", "--silent-after=nan"}).error ==
        "--silent-after: 'nan' is not a positive number of seconds");
  CHECK(Parse({"h:1", "--secret-file="}).error ==
        "--secret-file: give the path of the job's secret file");
}

TEST_CASE("StatusUsage names every option", "[status_tool]") {
  std::string usage = cpplaunch::status::StatusUsage();
  for (const char* option : {"--json", "--watch", "--secret-file", "--silent-after", "--timeout",
                             "--help", "--version"}) {
    CHECK_THAT(usage, Catch::Contains(option));
  }
}
