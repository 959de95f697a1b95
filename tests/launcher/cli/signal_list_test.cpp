#include "launcher/cli/signal_list.h"

#include <catch2/catch.hpp>
#include <csignal>

namespace cpplaunch {
namespace {

TEST_CASE("torchrun's default list") {
  const SignalList list = ParseSignalList("SIGTERM,SIGINT,SIGHUP,SIGQUIT");
  CHECK(list.signals == std::vector<int>{SIGTERM, SIGINT, SIGHUP, SIGQUIT});
  CHECK(list.warnings.empty());
}

TEST_CASE("names are stripped; repeats collapse; SLURM's USR1/USR2 work") {
  const SignalList list = ParseSignalList(" SIGUSR1 , SIGUSR2,SIGUSR1,SIGRTMIN");
  CHECK(list.signals == std::vector<int>{SIGUSR1, SIGUSR2, SIGRTMIN});
  CHECK(list.warnings.empty());
}

TEST_CASE("unknown names are skipped with a warning, as torchrun logs and skips them") {
  const SignalList list = ParseSignalList("SIGTERM,TERM,sigint,SIGFOO,");
  CHECK(list.signals == std::vector<int>{SIGTERM});
  REQUIRE(list.warnings.size() == 4);
  CHECK(list.warnings[0].find("'TERM'") != std::string::npos);
  CHECK(list.warnings[1].find("'sigint'") != std::string::npos);
  CHECK(list.warnings[3].find("''") != std::string::npos);
}

TEST_CASE("uncatchable signals and SIGCHLD are skipped with a warning") {
  const SignalList list = ParseSignalList("SIGKILL,SIGSTOP,SIGCHLD,SIGINT");
  CHECK(list.signals == std::vector<int>{SIGINT});
  CHECK(list.warnings.size() == 3);
}

TEST_CASE("forward signals: names in order, without repeats; empty is none") {
  std::string error;
  CHECK(ParseForwardSignals(" SIGUSR1 ,SIGUSR2,SIGUSR1", &error) ==
        std::vector<int>{SIGUSR1, SIGUSR2});
  CHECK(ParseForwardSignals("SIGRTMIN,SIGCONT", &error) == std::vector<int>{SIGRTMIN, SIGCONT});
  CHECK(ParseForwardSignals("", &error) == std::vector<int>{});
  CHECK(ParseForwardSignals("  ", &error) == std::vector<int>{});
  CHECK(error.empty());
}

TEST_CASE("forward signals: an unknown name is an error that names it") {
  std::string error;
  CHECK_FALSE(ParseForwardSignals("SIGUSR1,USR2", &error));
  CHECK(error ==
        "--forward-signals: 'USR2' is not a signal name (use the SIG names, "
        "comma-separated: SIGUSR1,SIGUSR2)");
  CHECK_FALSE(ParseForwardSignals("SIGUSR1,", &error));
  CHECK(error.starts_with("--forward-signals: '' is not a signal name"));
  CHECK_FALSE(ParseForwardSignals("sigusr1", &error));
}

TEST_CASE("forward signals: uncatchable signals and SIGCHLD are errors") {
  std::string error;
  CHECK_FALSE(ParseForwardSignals("SIGKILL", &error));
  CHECK(error == "--forward-signals: cannot forward SIGKILL: it cannot be caught");
  CHECK_FALSE(ParseForwardSignals("SIGUSR1,SIGSTOP", &error));
  CHECK(error == "--forward-signals: cannot forward SIGSTOP: it cannot be caught");
  CHECK_FALSE(ParseForwardSignals("SIGCHLD", &error));
  CHECK(error.find("SIGCHLD") != std::string::npos);
}

TEST_CASE("signal module names") {
  CHECK(SignalModuleName(SIGUSR1) == "SIGUSR1");
  CHECK(SignalModuleName(SIGABRT) == "SIGABRT");
  CHECK(SignalModuleName(SIGRTMIN) == "SIGRTMIN");
  CHECK(SignalModuleName(SIGRTMIN + 1) == "signal " + std::to_string(SIGRTMIN + 1));
}

}  // namespace
}  // namespace cpplaunch
