#pragma once
// The agent's own log (docs/user-guide.md, "The agent's log"): every line the agent says, and at
// LOGLEVEL=INFO or DEBUG what it decided and each rendezvous and store step. spdlog writes it,
// compiled into this file's translation unit only (header-only spdlog and fmt: no libspdlog or
// libfmt at run time, which the package test checks; no spdlog header leaks to the callers).
//
// Two places:
//   - the console, through the caller's writer (kept in order with the workers' tee'd lines):
//     said lines always, INFO lines at LOGLEVEL=INFO or DEBUG, DEBUG lines at DEBUG. Untimed,
//     as torchrun prints them;
//   - agent.log, once OpenFile names it (with --log-dir): INFO and above, DEBUG too at
//     LOGLEVEL=DEBUG, each with its time and level, flushed line by line so that a killed
//     agent's last lines are on disk. Lines from before OpenFile (the last kBacklog) come first,
//     with their own times.
//
// Not thread-safe: the agent's loop thread only.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "launcher/log/log_level.h"

namespace cpplaunch {

class AgentLog {
 public:
  // Receives each line for the console, without a newline.
  using Console = std::function<void(std::string_view line)>;
  static constexpr size_t kBacklog = 64;

  // A LOGLEVEL that was no level (`setting.warning`) is said at once, in its one line.
  AgentLog(const LogLevelSetting& setting, Console console);
  ~AgentLog();
  AgentLog(const AgentLog&) = delete;
  AgentLog& operator=(const AgentLog&) = delete;

  // A line the agent says whatever the level (a failure, a decision the user must see). In
  // agent.log at WARNING, or ERROR for a line that starts with "error: ".
  void Say(std::string_view line);
  void Info(std::string_view line);
  void Debug(std::string_view line);
  // A block the caller printed on the console itself (the failure summary): in agent.log only,
  // at ERROR, one entry per line.
  void Keep(std::string_view block);

  // Whether Debug lines go anywhere (callers skip building them otherwise).
  bool debug() const { return level_ == LogLevel::kDebug; }

  // Starts agent.log at `path` (created or truncated, mode 0644, not inherited by the workers)
  // with the backlog. Returns "" or one line naming the path and why it cannot be written; the
  // log then stays on the console only. Once per log.
  std::string OpenFile(const std::filesystem::path& path);

 private:
  struct Sinks;
  LogLevel level_;
  std::unique_ptr<Sinks> sinks_;
};

}  // namespace cpplaunch
