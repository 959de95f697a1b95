#include "launcher/cli/option_value.h"

#include <catch2/catch.hpp>

#include "launcher/cli/parse_failure.h"

namespace cpplaunch {
namespace {

// The failure a check throws, or nullopt when it passes.
template <typename Check>
std::optional<ParseFailure> FailureOf(Check check) {
  try {
    check();
  } catch (const ParseFailure& failure) {
    return failure;
  }
  return std::nullopt;
}

TEST_CASE("int and float options take Python's number syntax") {
  const OptionSpec& restarts = SpecFor(OptionId::kMaxRestarts);
  CHECK_FALSE(FailureOf([&] { CheckType(restarts, " 1_000 "); }));
  CHECK_FALSE(FailureOf([&] { CheckType(restarts, "-3"); }));
  auto bad = FailureOf([&] { CheckType(restarts, "2147483648"); });  // beyond the C int
  REQUIRE(bad);
  CHECK(bad->status == ParseStatus::kUsageError);
  CHECK(bad->message == "argument --max-restarts/--max_restarts: invalid int value: '2147483648'");
  const OptionSpec& interval = SpecFor(OptionId::kMonitorInterval);
  CHECK_FALSE(FailureOf([&] { CheckType(interval, "1e-3"); }));
  CHECK(FailureOf([&] { CheckType(interval, "0x1p3"); }));
  CHECK_FALSE(FailureOf([&] { CheckType(SpecFor(OptionId::kRole), "anything"); }));
}

TEST_CASE("choices are checked exactly, and listed in the error") {
  const OptionSpec& method = SpecFor(OptionId::kStartMethod);
  CHECK_FALSE(FailureOf([&] { CheckChoice(method, "forkserver"); }));
  auto bad = FailureOf([&] { CheckChoice(method, "Fork"); });
  REQUIRE(bad);
  CHECK(bad->message ==
        "argument --start-method/--start_method: invalid choice: 'Fork' (choose from 'spawn', "
        "'fork', 'forkserver')");
}

TEST_CASE("a flag's PET_ variable is an integer: nonzero is set") {
  const OptionSpec& standalone = SpecFor(OptionId::kStandalone);
  CHECK(FlagFromEnvironment(standalone, "1") == "1");
  CHECK(FlagFromEnvironment(standalone, " -2 ") == "1");
  CHECK(FlagFromEnvironment(standalone, "0") == "0");
  auto bad = FailureOf([&] { FlagFromEnvironment(standalone, "true"); });
  REQUIRE(bad);
  CHECK(bad->status == ParseStatus::kValueError);
  CHECK(bad->message.starts_with("PET_STANDALONE=true: "));
}

}  // namespace
}  // namespace cpplaunch
