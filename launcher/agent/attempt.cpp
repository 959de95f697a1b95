#include "launcher/agent/attempt.h"

#include <csignal>
#include <filesystem>
#include <utility>

namespace cpplaunch {

Attempt::Attempt(boost::asio::io_context& io, const Round& round, const LogDir& logs,
                 ConsoleWriter& out, ConsoleWriter& err)
    : round_(round) {
  logs.PrepareAttempt(round.restart_count, round.layout.local_world_size);
  output_ = std::make_unique<WorkerOutput>(io, out, err);
}

std::string Attempt::StartedLine() const {
  const RankLayout& layout = round_.layout;
  return "attempt " + std::to_string(round_.restart_count) + ": started " +
         std::to_string(layout.local_world_size) + " workers, ranks " +
         std::to_string(layout.base_rank) + "-" +
         std::to_string(layout.base_rank + layout.local_world_size - 1) + " of " +
         std::to_string(layout.world_size);
}

void Attempt::DuplicateFilteredLines(const LaunchOptions& options, const LogDir& logs) {
  if (!logs.enabled()) return;
  const std::filesystem::path dir = logs.AttemptDir(round_.restart_count);
  output_->DuplicateMatchingLines(false, options.duplicate_stdout_filters,
                                  dir / "filtered_stdout.log");
  output_->DuplicateMatchingLines(true, options.duplicate_stderr_filters,
                                  dir / "filtered_stderr.log");
}

std::vector<ProcessSpec> Attempt::Open(std::vector<WorkerSpec> specs,
                                       const NumaPlacement& placement) {
  started_ = std::chrono::system_clock::now();
  std::vector<ProcessSpec> processes;
  processes.reserve(specs.size());
  for (WorkerSpec& spec : specs) {
    ChildStdio stdio = output_->Open(spec.streams);
    processes.push_back(ProcessSpec{.id = spec.local_rank,
                                    .argv = std::move(spec.argv),
                                    .env = std::move(spec.env),
                                    .cwd = std::nullopt,
                                    .stdout_fd = stdio.stdout_fd,
                                    .stderr_fd = stdio.stderr_fd,
                                    .cpus = placement.CpusFor(spec.local_rank)});
  }
  return processes;
}

void Attempt::Started(const std::vector<LiveWorker>& live) {
  std::vector<pid_t> pids;
  pids.reserve(live.size());
  for (const LiveWorker& worker : live) pids.push_back(worker.pid);
  oom_.Baseline(pids);
}

void Attempt::OnWorkerExit(const WorkerExitEvent& event) {
  if (event.exit.signaled() && event.exit.signal() == SIGKILL) {
    oom_verdicts_[event.pid] = oom_.Check();
  }
}

void Attempt::Drain(std::chrono::milliseconds grace, std::function<void()> drained) {
  output_->Drain(grace, [this, drained = std::move(drained)] {
    log_write_errors_ = output_->log_write_errors();
    output_.reset();
    drained();
  });
}

}  // namespace cpplaunch
