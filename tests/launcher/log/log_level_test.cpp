#include "launcher/log/log_level.h"

#include <catch2/catch.hpp>
#include <string>

namespace cpplaunch {
namespace {

TEST_CASE("LOGLEVEL: Python's names and aliases, in any case", "[log][log_level]") {
  CHECK(ReadLogLevel("DEBUG").level == LogLevel::kDebug);
  CHECK(ReadLogLevel("INFO").level == LogLevel::kInfo);
  CHECK(ReadLogLevel("info").level == LogLevel::kInfo);  // Python's setLevel raises here
  CHECK(ReadLogLevel("WARN").level == LogLevel::kWarning);
  CHECK(ReadLogLevel("Error").level == LogLevel::kError);
  CHECK(ReadLogLevel("FATAL").level == LogLevel::kCritical);
  CHECK(ReadLogLevel("CRITICAL").warning.empty());
}

TEST_CASE("LOGLEVEL: unset or empty is WARNING, silently", "[log][log_level]") {
  for (const auto& value :
       {std::optional<std::string_view>(), std::optional<std::string_view>("")}) {
    const LogLevelSetting setting = ReadLogLevel(value);
    CHECK(setting.level == LogLevel::kWarning);
    CHECK(setting.warning.empty());
  }
}

TEST_CASE("LOGLEVEL: anything else is WARNING, said in one bounded line", "[log][log_level]") {
  const LogLevelSetting verbose = ReadLogLevel("VERBOSE");
  CHECK(verbose.level == LogLevel::kWarning);
  CHECK(verbose.warning ==
        "LOGLEVEL=VERBOSE is not a log level (DEBUG, INFO, WARNING, ERROR or CRITICAL); using "
        "WARNING");
  const std::string huge(100000, 'x');
  const std::string warning = ReadLogLevel(huge).warning;
  CHECK(warning.size() < 200);
  CHECK(warning.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
