#include "launcher/agent/watchdog.h"

#include <filesystem>
#include <string>
#include <utility>

#include "launcher/output/log_dir.h"
#include "launcher/process/worker_exit.h"
#include "worker_env/env_names.h"

namespace cpplaunch {

bool Watchdog::Enabled(const EnvMap& env) {
  return Lookup(env, env_names::kEnableFileTimer).value_or("") == "1";
}

std::unique_ptr<Watchdog> Watchdog::Start(boost::asio::io_context& io, EnvMap& env,
                                          AgentConsole& console, OnKill on_kill) {
  if (!Enabled(env)) return nullptr;
  auto path = Lookup(env, env_names::kTimerFile);
  std::unique_ptr<Watchdog> watchdog(new Watchdog(console, std::move(on_kill)));
  Watchdog* self = watchdog.get();
  watchdog->server_ = std::make_unique<FileTimerServer>(
      io, path ? std::filesystem::path(*path) : FileTimerServer::DefaultPath(LogDir::TempRoot()),
      [&console](const std::string& line) { console.Say(line); },
      [self](const WatchdogKill& kill) { self->Killed(kill); });
  env[std::string(env_names::kTimerFile)] = watchdog->server_->path().string();
  console.Info("watchdog listening on " + watchdog->server_->path().string());
  return watchdog;
}

Watchdog::Watchdog(AgentConsole& console, OnKill on_kill)
    : console_(console), on_kill_(std::move(on_kill)) {}

const std::vector<WatchdogKill>& Watchdog::kills() const {
  static const std::vector<WatchdogKill> kNone;
  return server_ ? server_->kills() : kNone;
}

void Watchdog::OnAttemptStarting(const Round& /*round*/) {
  if (server_) server_->NewAttempt();
}

void Watchdog::OnWorkerExit(const WorkerExitEvent& event) {
  if (server_) server_->OnWorkerExit(event.id, event.pid);
}

// The FIFO goes with the agent's run, before its console is flushed.
void Watchdog::OnAgentEnded(const AgentEnded& /*ended*/) { server_.reset(); }

std::optional<std::string> Watchdog::SignalSent(int pid) const {
  return WatchdogKillReason(kills(), pid);
}

void Watchdog::Killed(const WatchdogKill& kill) {
  if (on_kill_) on_kill_(kill);
  const TimerExpiry& expiry = kill.expiry;
  console_.Say("watchdog: pid " + std::to_string(expiry.pid) + " ran past its timer '" +
               expiry.scope_id + "'; " +
               (kill.delivered ? "sent it " + SignalName(expiry.signal)
                               : "already gone, " + SignalName(expiry.signal) + " not sent"));
}

}  // namespace cpplaunch
