// AgentListeners: every listener hears every event, in the order the listeners were added.

#include "launcher/job/agent_events.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

namespace cpplaunch {
namespace {

class Recorder final : public AgentListener {
 public:
  Recorder(std::string name, std::vector<std::string>& heard)
      : name_(std::move(name)), heard_(heard) {}
  void OnAttemptStarting(const Round& round) override {
    heard_.push_back(name_ + " starting " + std::to_string(round.restart_count));
  }
  void OnAttemptStarted(const AttemptStarted& started) override {
    heard_.push_back(name_ + " started " + std::to_string(started.workers.size()));
  }
  void OnWorkerExit(const WorkerExitEvent& event) override {
    heard_.push_back(name_ + " exit " + std::to_string(event.pid));
  }
  void OnAttemptDone(const AttemptResult& result) override {
    heard_.push_back(name_ + " done " + OutcomeName(result.outcome));
  }
  void OnDecision(const AttemptDecided& decided) override {
    heard_.push_back(name_ + " decided " + (decided.failures ? "with failures" : "clean"));
  }
  void OnAgentEnded(const AgentEnded& ended) override {
    heard_.push_back(name_ + " ended " + std::to_string(ended.exit_status));
  }

 private:
  std::string name_;
  std::vector<std::string>& heard_;
};

TEST_CASE("AgentListeners tells every listener every event, in the order they were added",
          "[agent][agent_events]") {
  std::vector<std::string> heard;
  AgentListeners listeners;
  listeners.Add(std::make_unique<Recorder>("a", heard));
  listeners.Add(std::make_unique<Recorder>("b", heard));
  Round round;
  round.restart_count = 2;
  listeners.OnAttemptStarting(round);
  listeners.OnAttemptStarted(AttemptStarted{round, {LiveWorker{0, 41}, LiveWorker{1, 42}}, {}});
  listeners.OnWorkerExit(WorkerExitEvent{0, 41, WorkerExit::Exited(1), {}});
  AttemptResult result;
  result.outcome = AttemptOutcome::kFailed;
  listeners.OnAttemptDone(result);
  const AttemptDecision decision;
  const FailureFindings findings;
  listeners.OnDecision(AttemptDecided{round, result, decision, &findings});
  const std::optional<std::string> error;
  listeners.OnAgentEnded(AgentEnded{ExitCode::kFailure, 1, error});
  CHECK(heard == std::vector<std::string>{"a starting 2", "b starting 2", "a started 2",
                                          "b started 2", "a exit 41", "b exit 41", "a done failed",
                                          "b done failed", "a decided with failures",
                                          "b decided with failures", "a ended 1", "b ended 1"});
}

}  // namespace
}  // namespace cpplaunch
