#pragma once
// torchrun's file-timer watchdog as one of the agent's listeners
// (TORCHELASTIC_ENABLE_FILE_TIMER=1): the FIFO server (file_timer_server.h) set up before the first
// attempt, its path in the agent's environment (every attempt's workers inherit it, as torchrun
// sets os.environ), told of each attempt and each worker exit, and closed when the agent ends. Each
// kill is said on the agent's stderr, after `on_kill` (the events that record it) ran. Threads: the
// agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <vector>

#include "launcher/job/agent_events.h"
#include "launcher/report/agent_console.h"
#include "launcher/watchdog/file_timer_server.h"
#include "launcher/watchdog/watchdog_kill.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class Watchdog final : public AgentListener {
 public:
  using OnKill = std::function<void(const WatchdogKill&)>;

  // Whether `env` enables the watchdog (TORCHELASTIC_ENABLE_FILE_TIMER=1).
  static bool Enabled(const EnvMap& env);
  // Null unless `env` enables the watchdog. The FIFO is TORCHELASTIC_TIMER_FILE, or a fresh
  // path in the temporary directory; `env` gets its path. `console` must outlive the watchdog.
  // Throws std::system_error when the FIFO cannot be made.
  static std::unique_ptr<Watchdog> Start(boost::asio::io_context& io, EnvMap& env,
                                         AgentConsole& console, OnKill on_kill);

  // This attempt's kills, in the order they happened.
  const std::vector<WatchdogKill>& kills() const;

  void OnAttemptStarting(const Round& round) override;
  void OnWorkerExit(const WorkerExitEvent& event) override;
  void OnAgentEnded(const AgentEnded& ended) override;
  // A worker this attempt's watchdog killed: "killed by SIGKILL from cpplaunch's file-timer
  // watchdog (timer ...)".
  std::optional<std::string> SignalSent(int pid) const override;

 private:
  Watchdog(AgentConsole& console, OnKill on_kill);
  void Killed(const WatchdogKill& kill);

  AgentConsole& console_;
  OnKill on_kill_;
  std::unique_ptr<FileTimerServer> server_;  // null once the agent ended
};

}  // namespace cpplaunch
