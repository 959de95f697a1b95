#pragma once
// The agent's own console: its stdout and stderr writers, and the lines the agent says there
// ("cpplaunch: ..." on stderr, in order with the workers' tee'd lines).
//
// One writer serves both streams when stdout and stderr are the same file (a terminal, or 2>&1),
// so that a stdout line and a stderr line never split each other.
// Threads: the agent's loop thread (the writers' io_context).

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "launcher/output/console_writer.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class AgentConsole {
 public:
  // INFO lines are said too when `env` asks for them (torchrun's LOGLEVEL=INFO or DEBUG). The
  // descriptors belong to the caller and stay open while the console is used.
  AgentConsole(boost::asio::io_context& io, int stdout_fd, int stderr_fd, const EnvMap& env);

  ConsoleWriter& out() { return out_; }
  ConsoleWriter& err() { return err_; }

  // One line on stderr, "cpplaunch: " first.
  void Say(const std::string& line) { err_.Write("cpplaunch: " + line + "\n"); }
  // The same, only when verbose: torchrun's agent logs its configuration at INFO.
  void Info(const std::string& line) {
    if (verbose_) Say(line);
  }

  // Flushes both streams by `deadline`; `flushed` runs once stderr is flushed.
  void Flush(std::chrono::steady_clock::time_point deadline, std::function<void()> flushed);

 private:
  ConsoleWriter out_;
  std::unique_ptr<ConsoleWriter> separate_err_;  // null when stderr is stdout's file
  ConsoleWriter& err_;
  bool verbose_;
};

}  // namespace cpplaunch
