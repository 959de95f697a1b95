#include "launcher/cli/option_value.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

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

TEST_CASE("RunIdProblem accepts the ids torchrun users pass", "[cli][option_value]") {
  for (const std::string& id : std::vector<std::string>{
           "none", "", "1234567", "1234567_12", "8812345.0", "trainer-7f9c4d5b6-x2kqz",
           "my-job.default.svc", "3f2b8c1e-9a4d-4b7e-8f21-6c0d5e4a7b93", "run 7", "exp:lr=0.1",
           "ünïcode-ид", std::string(kMaxRunIdBytes, 'a')}) {
    INFO(id);
    CHECK(RunIdProblem("--rdzv-id", id).empty());
  }
}

TEST_CASE("RunIdProblem refuses long ids, control characters and '/' in one short line",
          "[cli][option_value]") {
  // The repro: a 9 KB id reached the store and the log directory.
  const std::string huge(9000, 'x');
  const std::string line = RunIdProblem("--rdzv-id", huge);
  CHECK(line ==
        "--rdzv-id: a run id of 9000 bytes; it may have at most 246 (it names the run's log "
        "directory); give a shorter one, such as the job's id");
  CHECK_THAT(RunIdProblem("--rdzv-id", std::string(kMaxRunIdBytes + 1, 'a')),
             Catch::StartsWith("--rdzv-id: a run id of 247 bytes"));
  CHECK(RunIdProblem("--rdzv-id", "job\n7") ==
        "--rdzv-id: the run id has a control character (byte 0x0a) at byte 4; give one of "
        "printable characters");
  CHECK_THAT(RunIdProblem("--rdzv-id", "a\x7f"), Catch::Contains("byte 0x7f"));
  CHECK(RunIdProblem("--rdzv-id", "team/job") ==
        "--rdzv-id 'team/job': a run id may not contain '/' (it names the run's log directory); "
        "use '-' or '_'");
}

TEST_CASE("Every option value is bounded; --role and --log-dir have their own rules",
          "[cli][option_value]") {
  CHECK(OptionValueProblem("--role", std::string(kMaxOptionValueBytes, 'r')).empty());
  CHECK(OptionValueProblem("PET_ROLE", std::string(kMaxOptionValueBytes + 1, 'r')) ==
        "PET_ROLE: a value of 8193 bytes; an option's value may have at most 8192 bytes");
  CHECK(RoleProblem("--role", "trainer").empty());
  CHECK_THAT(RoleProblem("--role", "a\tb"), Catch::StartsWith("--role: the role name has a "
                                                              "control character (byte 0x09)"));
  CHECK(PathProblem("--log-dir", std::string(kMaxPathBytes, 'p')).empty());
  CHECK(PathProblem("--log-dir", std::string(5000, 'p')) ==
        "--log-dir: a path of 5000 bytes; Linux allows at most 4095");
}

TEST_CASE("BareAddress takes the brackets off an IPv6 literal only", "[cli][option_value]") {
  CHECK(BareAddress("[::1]") == "::1");
  CHECK(BareAddress("[fe80::1%eth0]") == "fe80::1%eth0");
  CHECK(BareAddress("::1") == "::1");
  CHECK(BareAddress("10.0.0.2") == "10.0.0.2");
  CHECK(BareAddress("[10.0.0.2]") == "[10.0.0.2]");  // not IPv6: refused as it is
  CHECK(BareAddress("[::1") == "[::1");
  CHECK(BareAddress("[]") == "[]");
  CHECK(BareAddress("") == "");
}

constexpr std::string_view kHint =
    "give one host name or address of this host, such as 10.0.0.2 (the one the other hosts "
    "reach it at)";

TEST_CASE("--local-addr takes one host name or address, never a separator of the node id",
          "[cli][option_value]") {
  for (const std::string& address :
       std::vector<std::string>{"", "10.0.0.2", "node-7.cluster.local", "fe80::1%eth0", "::1",
                                "::ffff:10.0.0.2", "host_name"}) {
    INFO(address);
    CHECK(HostAddressProblem("--local-addr", address, kHint).empty());
  }
  // The repro: a list where one address goes became a node id that the state's ',' split, and
  // every host then read "an unreadable join queue".
  CHECK(HostAddressProblem("--local-addr", "10.0.0.2,10.0.0.3", kHint) ==
        "--local-addr '10.0.0.2,10.0.0.3' has ',' at byte 9: give one host name or address of "
        "this host, such as 10.0.0.2 (the one the other hosts reach it at)");
  CHECK_THAT(HostAddressProblem("--local-addr", "10.0.0.2/24", kHint), Catch::Contains("has '/'"));
  CHECK_THAT(HostAddressProblem("--local-addr", "10.0.0.2 ", kHint), Catch::Contains("has ' '"));
  CHECK_THAT(HostAddressProblem("--local-addr", "a\nb", kHint),
             Catch::Contains("has a control character (byte 0x0a) at byte 2"));
  CHECK_THAT(HostAddressProblem("--local-addr", std::string(9000, ','), kHint),
             Catch::Contains("... (9000 bytes)' has ','"));
}

TEST_CASE("Abbreviated quotes short values whole and long ones by their start and size",
          "[cli][option_value]") {
  CHECK(Abbreviated("short") == "short");
  CHECK(Abbreviated(std::string(64, 'a')) == std::string(64, 'a'));
  CHECK(Abbreviated(std::string(9000, 'a')) == std::string(40, 'a') + "... (9000 bytes)");
}

}  // namespace
}  // namespace cpplaunch
