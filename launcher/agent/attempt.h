#pragma once
// One attempt of this host's workers, from the round the rendezvous agreed on to the job's
// decision about it. It owns what lives exactly that long: the round, the workers' output
// (WorkerOutput, released once drained), when the workers started, the agent signals seen while
// they ran, the OOM verdicts on their SIGKILL deaths and the agent's own log files that could
// not be written. The agent makes one at Launch and drops it once the attempt is concluded; the
// failure report reads it in between.
// Threads: construct, call and destroy on the agent's loop thread.

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "launcher/agent/numa_placement.h"
#include "launcher/cli/options.h"
#include "launcher/diagnosis/oom_watch.h"
#include "launcher/job/job.h"
#include "launcher/job/worker_specs.h"
#include "launcher/output/console_writer.h"
#include "launcher/output/log_dir.h"
#include "launcher/output/worker_output.h"
#include "launcher/process/worker_group.h"

namespace cpplaunch {

class Attempt {
 public:
  // Prepares the attempt's log directory and its output. `out` and `err` must outlive the
  // attempt. Throws std::system_error (a directory that cannot be made).
  Attempt(boost::asio::io_context& io, const Round& round, const LogDir& logs, ConsoleWriter& out,
          ConsoleWriter& err);
  Attempt(const Attempt&) = delete;
  Attempt& operator=(const Attempt&) = delete;

  const Round& round() const { return round_; }
  // "attempt 0: started 4 workers, ranks 0-3 of 8" (without "cpplaunch: ").
  std::string StartedLine() const;
  // REQUIRES: not yet drained.
  WorkerOutput& output() { return *output_; }

  // --duplicate-stdout-filters / --duplicate-stderr-filters: torchrun's filtered_stdout.log and
  // filtered_stderr.log in the attempt's directory (none when files are disabled, or when no
  // line matched).
  void DuplicateFilteredLines(const LaunchOptions& options, const LogDir& logs);
  // The specs as processes: each worker's stdout and stderr opened by the attempt's output,
  // its CPUs from `placement`. The workers' start time is now. Throws std::system_error.
  std::vector<ProcessSpec> Open(std::vector<WorkerSpec> specs, const NumaPlacement& placement);
  // The workers run: the OOM counters' baseline.
  void Started(const std::vector<LiveWorker>& live);
  // Every exit, before the supervisor sees it: a SIGKILL is checked against the OOM counters
  // now, while they still tell this death apart from the teardown's.
  void OnWorkerExit(const WorkerExitEvent& event);
  // The agent received a signal while the workers ran: how many so far, this one included.
  int CountSignal() { return ++signals_; }
  // The workers are reaped: `drained` runs once every line they wrote is out; the output is
  // released then, its write errors kept.
  void Drain(std::chrono::milliseconds grace, std::function<void()> drained);

  std::chrono::system_clock::time_point started() const { return started_; }
  const std::map<pid_t, OomVerdict>& oom_verdicts() const { return oom_verdicts_; }
  const std::vector<LogWriteError>& log_write_errors() const { return log_write_errors_; }

 private:
  Round round_;
  std::unique_ptr<WorkerOutput> output_;
  std::chrono::system_clock::time_point started_;
  int signals_ = 0;
  OomWatch oom_;
  std::map<pid_t, OomVerdict> oom_verdicts_;  // SIGKILL deaths, by pid
  std::vector<LogWriteError> log_write_errors_;
};

}  // namespace cpplaunch
