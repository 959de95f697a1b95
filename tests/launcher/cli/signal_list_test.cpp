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

}  // namespace
}  // namespace cpplaunch
