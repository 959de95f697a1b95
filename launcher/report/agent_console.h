#pragma once
// The agent's own console: its stdout and stderr writers, and the lines the agent says there
// ("cpplaunch: ..." on stderr, in order with the workers' tee'd lines). Each line also goes to
// the agent's log (launcher/log/agent_log.h: LOGLEVEL, and agent.log once a listener opens it).
//
// One writer serves both streams when stdout and stderr are the same file (a terminal, or 2>&1),
// so that a stdout line and a stderr line never split each other.
// Threads: the agent's loop thread (the writers' io_context).

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "launcher/log/agent_log.h"
#include "launcher/output/console_writer.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class AgentConsole {
 public:
  // INFO lines are said too when `env` asks for them (torchrun's LOGLEVEL=INFO or DEBUG), DEBUG
  // lines at DEBUG; a LOGLEVEL that is no level is said to be one line. The descriptors belong
  // to the caller and stay open while the console is used.
  AgentConsole(boost::asio::io_context& io, int stdout_fd, int stderr_fd, const EnvMap& env);
  AgentConsole(const AgentConsole&) = delete;
  AgentConsole& operator=(const AgentConsole&) = delete;

  ConsoleWriter& out() { return out_; }
  ConsoleWriter& err() { return err_; }

  // One line on stderr, "cpplaunch: " first.
  void Say(const std::string& line) { log_.Say(line); }
  // The same, only when verbose: torchrun's agent logs its configuration at INFO.
  void Info(const std::string& line) { log_.Info(line); }
  // The same at LOGLEVEL=DEBUG: each rendezvous and store step.
  void Debug(const std::string& line) { log_.Debug(line); }
  bool debug() const { return log_.debug(); }
  // Debug as a function for those who trace (JobHooks::debug); empty unless LOGLEVEL=DEBUG.
  std::function<void(const std::string&)> DebugSink() {
    if (!debug()) return {};
    return [this](const std::string& line) { Debug(line); };
  }
  // A block the caller wrote to err() itself (the failure summary), kept in agent.log too.
  void Keep(std::string_view block) { log_.Keep(block); }

  AgentLog& log() { return log_; }

  // Flushes both streams by `deadline`; `flushed` runs once stderr is flushed.
  void Flush(std::chrono::steady_clock::time_point deadline, std::function<void()> flushed);

 private:
  ConsoleWriter out_;
  std::unique_ptr<ConsoleWriter> separate_err_;  // null when stderr is stdout's file
  ConsoleWriter& err_;
  AgentLog log_;
};

}  // namespace cpplaunch
