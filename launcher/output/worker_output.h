#pragma once
// Where each worker's stdout and stderr go: inherited, a log file, /dev/null, or (tee) a log file
// the worker appends to itself and the agent tails on its io_context, writing prefixed whole
// lines ("[default0]:...") to its own stdout (for stdout) or stderr (for stderr). The tail is
// event-driven (an inotify watch wakes the loop when the worker writes; no polling), so a line
// reaches the console as soon as the worker writes it, and the raw bytes are copied once, by the
// worker, as with redirects (torchrun's model). A tee without a file (--log-dir /dev/null) reads
// a pipe instead.

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "launcher/output/console_writer.h"
#include "launcher/output/filtered_log.h"
#include "launcher/output/line_prefixer.h"

namespace cpplaunch {

enum class StreamRoute {
  kInherit,  // the child inherits the agent's stream; nothing is copied (the default)
  kDiscard,  // /dev/null: a stream not redirected, of a rank hidden by --local-ranks-filter
  kFile,     // the child writes the log file directly (redirect; or tee of a hidden rank)
  kTee,      // the child writes the log file, the agent tails it for prefixed console lines;
             // without a log file, a pipe the agent reads for the console
};

// Pure. torchrun's rules (DefaultLogsSpecs.reify): tee implies redirect; a rank not listed in
// --local-ranks-filter (shown == false) keeps its files but reaches no console, so its tee'd
// streams become file-only and its un-redirected streams go to /dev/null.
// With files disabled (--log-dir /dev/null) cpplaunch keeps the user's intent rather than
// newest torchrun's accident (which prints everything unprefixed): tee -> prefixed console
// lines without a file, redirect -> /dev/null.
StreamRoute ResolveStreamRoute(bool redirect, bool tee, bool shown, bool files_enabled);

// One worker's output configuration.
struct WorkerStreams {
  int local_rank = 0;
  std::string prefix;  // console line prefix for kTee, e.g. FormatLinePrefix(...) = "[default0]:"
  StreamRoute stdout_route = StreamRoute::kInherit;
  StreamRoute stderr_route = StreamRoute::kInherit;
  // Used by kFile (required) and kTee (empty = console only). Truncated when opened.
  std::filesystem::path stdout_log;
  std::filesystem::path stderr_log;
  // The stderr log (kFile) is not the user's: it keeps a hidden rank's traceback for the
  // failure summary (--local-ranks-filter). Drain removes it when the worker wrote nothing.
  bool stderr_log_for_failures = false;
};

// The descriptors a child must see as its fd 1 and 2 (ProcessSpec::stdout_fd / stderr_fd);
// -1 = inherit the agent's. They are O_CLOEXEC and owned by WorkerOutput: the spawner dup2()s
// them in the child and never closes them.
struct ChildStdio {
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// A log file the agent could not write to the end (ENOSPC, EIO, EFBIG...).
struct LogWriteError {
  std::filesystem::path path;
  std::string error;  // "No space left on device"
};

// One attempt's worth of worker output (make a new one per (re)start of the worker group).
// All methods and callbacks: the io_context's thread; no threads of its own.
class WorkerOutput {
 public:
  static constexpr std::size_t kReadChunk = std::size_t{256} << 10;
  // Requested pipe capacity (F_SETPIPE_SZ; failures are ignored).
  static constexpr int kPipeCapacity = 1 << 20;
  // How long Drain waits for EOF after the worker group has been reaped.
  static constexpr std::chrono::milliseconds kDefaultDrainGrace{2000};

  // `out` and `err` (the agent's stdout and stderr writers) must outlive this object.
  WorkerOutput(boost::asio::io_context& io, ConsoleWriter& out, ConsoleWriter& err);
  // Closes every descriptor and cancels pending reads: no callback runs afterwards.
  ~WorkerOutput();
  WorkerOutput(const WorkerOutput&) = delete;
  WorkerOutput& operator=(const WorkerOutput&) = delete;

  // --duplicate-stdout-filters / --duplicate-stderr-filters: the tee'd lines of that stream
  // (`stderr_stream` false: stdout) whose text contains any of `filters` also go, prefixed as
  // on the console, to `file`, one file for every worker of the attempt. Call before Open();
  // empty filters change nothing. The file is created with the first matching line; one that
  // cannot be created or written is a log write error (log_write_errors()).
  void DuplicateMatchingLines(bool stderr_stream, std::vector<std::string> filters,
                              const std::filesystem::path& file);

  // Opens the log files, /dev/null and pipes one worker needs (all O_CLOEXEC) and returns the
  // fds to give its ProcessSpec. Call once per worker before spawning it. Throws
  // std::system_error (e.g. the log file cannot be created).
  ChildStdio Open(const WorkerStreams& streams);

  // Adds an observer: each sees every chunk read from a worker's pipe or tailed log file, before
  // it is written anywhere (--hang-timeout counts lines and keeps the stacks workers dump on
  // stderr; the status endpoint notes each rank's last output). Add it before Start() (which
  // may read tailed files at once); it must not call back into this object.
  using Observer = std::function<void(int local_rank, bool is_stderr, std::string_view bytes)>;
  void Observe(Observer observer) { observers_.push_back(std::move(observer)); }

  // Closes the agent's copies of the child-side descriptors of every opened worker and starts
  // reading the pipes. Call once, after every worker was spawned (or failed to spawn). Until
  // then a pipe can never reach EOF.
  void Start();

  // Calls `drained` once (posted, on the loop thread) when every pipe has reached EOF and every
  // tailed log file has been read to its end, every partial last line has been written and the
  // console writers have flushed. A tailed file is read once more to its end and not waited
  // for: what a grandchild writes later stays in the file only. If some process
  // still holds a pipe's write end (a grandchild that escaped the process-group kill), reading
  // stops `grace` after this call, what was read is still written, and `drained` fires anyway;
  // the console flush is bounded by the same deadline. Call after the worker group is reaped.
  // Empty stderr logs kept only for failures (WorkerStreams) are removed first.
  void Drain(std::chrono::milliseconds grace, std::function<void()> drained);

  // Bytes read from the workers' pipes and tailed log files so far (tests, metrics).
  std::uint64_t bytes_read() const { return bytes_read_; }

  // The log files the agent writes itself (the --duplicate-*-filters files) whose writing
  // failed, in the order it happened. Each is reported once on the agent's stderr when it
  // happens ("cpplaunch: cannot write the log file P: E; ..."); the agent names them again in
  // its failure summary. The per-rank log files are written by the workers (tee or redirect),
  // so their write errors reach the workers, as under torchrun, not this list.
  const std::vector<LogWriteError>& log_write_errors() const { return log_write_errors_; }

 private:
  class Stream;
  void OnStreamDone(const Stream& stream);
  void WatchFiles();  // waits for the next writes to tailed log files
  void OnLogWriteError(const std::filesystem::path& path, int error);
  void MaybeFinishDrain();

  boost::asio::io_context& io_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // handlers hold a weak_ptr to it
  ConsoleWriter& out_;
  ConsoleWriter& err_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::filesystem::path> removed_if_empty_;  // stderr logs for failures only
  std::unique_ptr<FilteredLog> filtered_stdout_;         // --duplicate-stdout-filters, or null
  std::unique_ptr<FilteredLog> filtered_stderr_;         // --duplicate-stderr-filters, or null
  // inotify: tailed log files were written (open once a tee'd stream has a file).
  boost::asio::posix::stream_descriptor watcher_;
  static constexpr std::size_t kWatchEventBytes = 4096;
  std::unique_ptr<char[]> watch_events_;
  std::vector<UniqueFd> child_fds_;  // the agent's copies of child-side fds, closed by Start()
  boost::asio::steady_timer drain_timer_;
  std::function<void()> drained_;
  std::chrono::steady_clock::time_point drain_start_;
  std::chrono::steady_clock::time_point drain_deadline_;
  bool started_ = false;
  bool draining_ = false;
  bool flushing_ = false;
  std::uint64_t bytes_read_ = 0;
  std::vector<LogWriteError> log_write_errors_;
  std::vector<Observer> observers_;
};

}  // namespace cpplaunch
