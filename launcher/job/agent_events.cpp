#include "launcher/job/agent_events.h"

#include <utility>

namespace cpplaunch {

void AgentListeners::Add(std::unique_ptr<AgentListener> listener) {
  listeners_.push_back(std::move(listener));
}

void AgentListeners::OnAttemptStarting(const Round& round) {
  for (auto& listener : listeners_) listener->OnAttemptStarting(round);
}

void AgentListeners::OnAttemptStarted(const AttemptStarted& started) {
  for (auto& listener : listeners_) listener->OnAttemptStarted(started);
}

void AgentListeners::OnWorkerExit(const WorkerExitEvent& event) {
  for (auto& listener : listeners_) listener->OnWorkerExit(event);
}

void AgentListeners::OnAttemptDone(const AttemptResult& result) {
  for (auto& listener : listeners_) listener->OnAttemptDone(result);
}

void AgentListeners::OnDecision(const AttemptDecided& decided) {
  for (auto& listener : listeners_) listener->OnDecision(decided);
}

void AgentListeners::OnAgentEnded(const AgentEnded& ended) {
  for (auto& listener : listeners_) listener->OnAgentEnded(ended);
}

std::optional<std::string> AgentListeners::SignalSent(int pid) const {
  for (const auto& listener : listeners_) {
    if (auto reason = listener->SignalSent(pid)) return reason;
  }
  return std::nullopt;
}

}  // namespace cpplaunch
