#include "launcher/journal/agent_log_file.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cpplaunch {
namespace {

Round SecondHost() {
  Round round;
  round.restart_count = 1;
  round.layout.base_rank = 8;
  return round;
}

TEST_CASE("agent.log: an attempt's pids with their global ranks", "[agent_log_file]") {
  const std::vector<LiveWorker> workers{{0, 4242}, {1, 4243}};
  CHECK(WorkerPidsLine(SecondHost(), workers) == "attempt 1: pids 4242 (rank 8), 4243 (rank 9)");
}

TEST_CASE("agent.log: each exit as the worker ended", "[agent_log_file]") {
  CHECK(WorkerExitLine(WorkerExitEvent{1, 4243, WorkerExit::Signaled(11), {}}) ==
        "local rank 1 (pid 4243) killed by SIGSEGV");
  CHECK(WorkerExitLine(WorkerExitEvent{0, 4242, WorkerExit::Exited(0), {}}) ==
        "local rank 0 (pid 4242) exited with code 0");
}

TEST_CASE("agent.log: the decision after an attempt", "[agent_log_file]") {
  const Round round = SecondHost();
  AttemptResult result;
  result.restart_count = 1;
  result.outcome = AttemptOutcome::kFailed;
  AttemptDecision restart;
  restart.next = NextStep::kNextAttempt;
  restart.consumes_restart = true;
  CHECK(DecisionLine(AttemptDecided{round, result, restart}) ==
        "attempt 1 ended: failed; next: a restart");
  AttemptDecision reform;
  reform.next = NextStep::kNextAttempt;
  CHECK(DecisionLine(AttemptDecided{round, result, reform}) ==
        "attempt 1 ended: failed; next: a new round, no restart used");
  const AttemptDecision exit;  // kExit with code 1
  CHECK(DecisionLine(AttemptDecided{round, result, exit}) ==
        "attempt 1 ended: failed; the job ends with code 1");
}

TEST_CASE("agent.log: the agent's end (what ended it has a line of its own)", "[agent_log_file]") {
  const std::optional<std::string> none;
  CHECK(AgentEndedLine(AgentEnded{ExitCode::kSuccess, 0, none}) == "the agent exits with status 0");
  const std::optional<std::string> signal = "received SIGTERM";
  CHECK(AgentEndedLine(AgentEnded{ExitCode::kFailure, 143, signal}) ==
        "the agent exits with status 143");
}

}  // namespace
}  // namespace cpplaunch
