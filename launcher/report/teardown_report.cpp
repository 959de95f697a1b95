#include "launcher/report/teardown_report.h"

#include <algorithm>
#include <csignal>
#include <vector>

#include "base/text.h"

namespace cpplaunch {
namespace {

std::string Seconds(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

std::vector<int> SigkilledLocalRanks(const AttemptResult& result) {
  std::vector<int> ranks;
  for (const ExitRecord& exit : result.exits) {
    const WorkerExit& status = exit.event.exit;
    if (exit.role == ExitRole::kStopped && status.signaled() && status.signal() == SIGKILL) {
      ranks.push_back(exit.event.id);
    }
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace

std::string FailureTeardownLine(const WorkerExitEvent& root, int base_rank,
                                std::size_t still_running, int stop_signal,
                                std::chrono::milliseconds grace) {
  std::string line = "worker rank " + std::to_string(base_rank + root.id) + " (local rank " +
                     std::to_string(root.id) + ", pid " + std::to_string(root.pid) +
                     ") failed: " + root.exit.describe();
  if (still_running == 0) return line;
  return line + "; stopping the other " + std::to_string(still_running) + " worker" +
         Plural(still_running) + ": " + SignalName(stop_signal) + " now, SIGKILL in " +
         Seconds(grace) + " to any still running (--shutdown-timeout)";
}

std::string SignalTeardownLine(int signo, std::chrono::milliseconds grace) {
  std::string line = "received " + SignalName(signo) +
                     "; forwarding it to the workers; workers still running after " +
                     Seconds(grace) + " get SIGKILL (--shutdown-timeout)";
  if (signo == SIGINT) return line + "; press Ctrl-C again to SIGKILL them now";
  return line + "; a second signal SIGKILLs them now";
}

std::string SigkilledRanks(const AttemptResult& result) {
  std::vector<std::string> texts;
  for (int rank : SigkilledLocalRanks(result)) texts.push_back(std::to_string(rank));
  return Join(texts, ", ");
}

std::optional<std::string> SigkillLine(const AttemptResult& result, int stop_signal,
                                       std::chrono::milliseconds grace) {
  const std::size_t count = SigkilledLocalRanks(result).size();
  if (count == 0) return std::nullopt;
  const std::string who = "local rank" + std::string(Plural(count)) + " " + SigkilledRanks(result);
  if (result.killed_on_second_signal) return who + " SIGKILLed at the second signal";
  return who + " did not stop within " + Seconds(grace) + " of " + SignalName(stop_signal) +
         " and " + (count == 1 ? "was" : "were") + " SIGKILLed";
}

}  // namespace cpplaunch
