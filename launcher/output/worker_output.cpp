#include "launcher/output/worker_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <system_error>
#include <utility>

#include "base/fd_io.h"
#include "base/file_watch.h"

namespace cpplaunch {
namespace {

UniqueFd OpenForWriting(const std::filesystem::path& path, bool truncate, bool append = false) {
  const int flags =
      O_WRONLY | O_CLOEXEC | (truncate ? O_CREAT | O_TRUNC : 0) | (append ? O_APPEND : 0);
  UniqueFd fd(::open(path.c_str(), flags, 0666));
  if (!fd) ThrowLastError("open " + path.string());
  return fd;
}

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

Pipe MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) ThrowLastError("pipe2");
  Pipe pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
  // A bigger pipe means fewer wake-ups for a chatty worker. Refused above
  // /proc/sys/fs/pipe-max-size or the per-user quota: the default 64 KiB works too.
  (void)::fcntl(pipe.write_end.get(), F_SETPIPE_SZ, WorkerOutput::kPipeCapacity);
  return pipe;
}

}  // namespace

// One tee'd stream, read from one of two sources, written as prefixed lines to the console:
// - a pipe (console-only tee: no log file), read on the io_context until EOF;
// - the log file the worker appends to itself (tee with a file): tailed from `offset_` to EOF
//   whenever the owner's inotify watch says it was written, and to EOF once more at Drain().
//   The raw bytes are written once, by the worker; the agent only reads them for the console.
class WorkerOutput::Stream {
 public:
  // Reads the pipe `pipe` (adopted by a stream_descriptor).
  Stream(WorkerOutput& owner, UniqueFd pipe, ConsoleWriter& console, std::string prefix,
         FilteredLog* filtered, int local_rank, bool is_stderr)
      : Stream(owner, console, std::move(prefix), filtered, local_rank, is_stderr) {
    pipe_.assign(pipe.release());
  }
  // Tails the log file open read-only as `file`, watched as `watch_id`.
  Stream(WorkerOutput& owner, UniqueFd file, int watch_id, ConsoleWriter& console,
         std::string prefix, FilteredLog* filtered, int local_rank, bool is_stderr)
      : Stream(owner, console, std::move(prefix), filtered, local_rank, is_stderr) {
    file_ = std::move(file);
    watch_id_ = watch_id;
  }

  bool done() const { return done_; }
  int watch_id() const { return watch_id_; }

  // Starts reading: the pipe until EOF, or the file up to its current end.
  void Read() {
    if (file_) {
      ReadFile();
    } else {
      ReadPipe();
    }
  }

  // The worker group is gone: a tailed file is read to its end once more, then the stream
  // finishes (a grandchild still writing is not waited for; its later lines stay in the file).
  // A pipe keeps being read until EOF or Stop().
  void Drain() {
    if (!file_) return;
    finish_at_end_ = true;
    ReadFile();
  }

  // Gives up waiting: takes whatever the source holds right now (bounded), then finishes.
  void Stop() {
    if (done_) return;
    boost::system::error_code ec;
    if (file_) {
      for (std::size_t total = 0; total < kMaxBytesAtStop;) {
        const std::size_t n = ReadFileOnce();
        if (n == 0) break;
        total += n;
      }
      Finish();
      return;
    }
    pipe_.cancel(ec);
    // Non-blocking: read what is buffered now, never wait for a writer that may never stop.
    pipe_.non_blocking(true, ec);
    for (std::size_t total = 0; !ec && total < kMaxBytesAtStop;) {
      const std::size_t n = pipe_.read_some(boost::asio::buffer(buffer_.get(), kReadChunk), ec);
      Consume(n);
      total += n;
    }
    Finish();
  }

 private:
  // Bounds Stop(): a writer that keeps writing after the deadline cannot keep the agent here.
  static constexpr std::size_t kMaxBytesAtStop = std::size_t{16} << 20;

  Stream(WorkerOutput& owner, ConsoleWriter& console, std::string prefix, FilteredLog* filtered,
         int local_rank, bool is_stderr)
      : owner_(owner),
        local_rank_(local_rank),
        is_stderr_(is_stderr),
        pipe_(owner.io_),
        console_(console),
        prefixer_(std::move(prefix)),
        filtered_(filtered),
        buffer_(new char[kReadChunk]) {}

  void ReadPipe() {
    if (done_) return;
    pipe_.async_read_some(boost::asio::buffer(buffer_.get(), kReadChunk),
                          [this, alive = std::weak_ptr<int>(owner_.alive_)](
                              boost::system::error_code ec, std::size_t n) {
                            if (alive.expired() || done_) return;
                            Consume(n);
                            if (ec) {
                              Finish();
                            } else {
                              AfterConsole([this] { ReadPipe(); });
                            }
                          });
  }

  // Backpressure: while the console is congested nothing more is read. A pipe then fills and
  // the worker blocks in write(), as it would writing straight to a slow console; a tailed file
  // just grows (the worker is never slowed by the console).
  template <typename Next>
  void AfterConsole(Next next) {
    if (!console_.congested()) return next();
    waiting_for_console_ = true;
    console_.WhenUncongested([this, next, alive = std::weak_ptr<int>(owner_.alive_)] {
      if (alive.expired() || done_) return;
      waiting_for_console_ = false;
      next();
    });
  }

  // Reads the file from `offset_` to its end (or until the console is congested).
  void ReadFile() {
    if (done_ || waiting_for_console_) return;
    while (ReadFileOnce() > 0) {
      if (console_.congested()) return AfterConsole([this] { ReadFile(); });
    }
    if (finish_at_end_) Finish();
  }

  std::size_t ReadFileOnce() {
    const IoResult result = ReadAt(file_.get(), buffer_.get(), kReadChunk, offset_);
    if (!result.ok()) return 0;  // the end for now (an I/O error reads as the end, too)
    offset_ += result.bytes;
    Consume(result.bytes);
    return result.bytes;
  }

  void Consume(std::size_t n) {
    if (n == 0) return;
    owner_.bytes_read_ += n;
    const std::string_view bytes(buffer_.get(), n);
    for (const Observer& observer : owner_.observers_) observer(local_rank_, is_stderr_, bytes);
    prefixer_.Feed(bytes, lines_);
    WriteLines();
  }

  void WriteLines() {
    if (lines_.empty()) return;
    if (filtered_) filtered_->Write(lines_, prefixer_.prefix().size());
    console_.Write(lines_);
    lines_.clear();
  }

  void Finish() {
    prefixer_.Flush(lines_);
    WriteLines();
    boost::system::error_code ignored;
    pipe_.close(ignored);
    file_.reset();
    done_ = true;
    owner_.OnStreamDone(*this);
  }

  WorkerOutput& owner_;
  int local_rank_;
  bool is_stderr_;
  boost::asio::posix::stream_descriptor pipe_;  // open for a pipe source
  UniqueFd file_;                               // open for a file source
  int watch_id_ = -1;
  std::uint64_t offset_ = 0;
  ConsoleWriter& console_;
  LinePrefixer prefixer_;
  FilteredLog* filtered_;  // owned by WorkerOutput; null without duplicate filters
  std::unique_ptr<char[]> buffer_;
  std::string lines_;  // reused output buffer: no allocation per chunk in the steady state
  bool waiting_for_console_ = false;
  bool finish_at_end_ = false;
  bool done_ = false;
};

StreamRoute ResolveStreamRoute(bool redirect, bool tee, bool shown, bool files_enabled) {
  if (tee) {
    if (!shown) return files_enabled ? StreamRoute::kFile : StreamRoute::kDiscard;
    return StreamRoute::kTee;
  }
  if (redirect) return files_enabled ? StreamRoute::kFile : StreamRoute::kDiscard;
  return shown ? StreamRoute::kInherit : StreamRoute::kDiscard;
}

WorkerOutput::WorkerOutput(boost::asio::io_context& io, ConsoleWriter& out, ConsoleWriter& err)
    : io_(io),
      out_(out),
      err_(err),
      watcher_(io),
      watch_events_(new char[kWatchEventBytes]),
      drain_timer_(io) {}

WorkerOutput::~WorkerOutput() {
  // Handlers still queued on the loop see the expired guard; the descriptors close with their
  // owners (streams_, child_fds_) after this body.
  alive_.reset();
}

void WorkerOutput::DuplicateMatchingLines(bool stderr_stream, std::vector<std::string> filters,
                                          const std::filesystem::path& file) {
  if (filters.empty()) return;
  auto log = std::make_unique<FilteredLog>(
      std::move(filters), file,
      [this](const std::filesystem::path& path, int error) { OnLogWriteError(path, error); });
  (stderr_stream ? filtered_stderr_ : filtered_stdout_) = std::move(log);
}

ChildStdio WorkerOutput::Open(const WorkerStreams& streams) {
  // Everything is built first and committed at the end, so a failure leaks nothing.
  std::vector<UniqueFd> child_ends;
  std::vector<std::unique_ptr<Stream>> new_streams;
  auto open_one = [&](StreamRoute route, const std::filesystem::path& log, ConsoleWriter& console,
                      FilteredLog* filtered, bool is_stderr) -> int {
    switch (route) {
      case StreamRoute::kInherit:
        return -1;
      case StreamRoute::kDiscard:
        child_ends.push_back(OpenForWriting("/dev/null", false));
        break;
      case StreamRoute::kFile:
        child_ends.push_back(OpenForWriting(log, true));
        break;
      case StreamRoute::kTee:
        if (log.empty()) {
          Pipe pipe = MakePipe();
          new_streams.push_back(std::make_unique<Stream>(*this, std::move(pipe.read_end), console,
                                                         streams.prefix, filtered,
                                                         streams.local_rank, is_stderr));
          child_ends.push_back(std::move(pipe.write_end));
        } else {
          // The worker appends to its log itself (as with redirects); the agent tails it.
          child_ends.push_back(OpenForWriting(log, true, true));
          UniqueFd file(::open(log.c_str(), O_RDONLY | O_CLOEXEC));
          if (!file) ThrowLastError("open " + log.string());
          if (!watcher_.is_open()) watcher_.assign(OpenFileWatcher().release());
          const int watch_id = WatchForWrites(watcher_.native_handle(), log);
          new_streams.push_back(std::make_unique<Stream>(*this, std::move(file), watch_id, console,
                                                         streams.prefix, filtered,
                                                         streams.local_rank, is_stderr));
        }
        break;
    }
    return child_ends.back().get();
  };
  ChildStdio stdio;
  stdio.stdout_fd =
      open_one(streams.stdout_route, streams.stdout_log, out_, filtered_stdout_.get(), false);
  stdio.stderr_fd =
      open_one(streams.stderr_route, streams.stderr_log, err_, filtered_stderr_.get(), true);
  if (streams.stderr_route == StreamRoute::kFile && streams.stderr_log_for_failures) {
    removed_if_empty_.push_back(streams.stderr_log);
  }
  for (UniqueFd& fd : child_ends) child_fds_.push_back(std::move(fd));
  for (auto& stream : new_streams) streams_.push_back(std::move(stream));
  return stdio;
}

void WorkerOutput::Start() {
  if (started_) return;
  started_ = true;
  // The write ends now live in the children: only they keep the pipes open, so EOF means
  // "every process holding it is gone".
  child_fds_.clear();
  for (auto& stream : streams_) stream->Read();
  WatchFiles();
}

void WorkerOutput::WatchFiles() {
  if (!watcher_.is_open()) return;
  watcher_.async_read_some(
      boost::asio::buffer(watch_events_.get(), kWatchEventBytes),
      [this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec, std::size_t n) {
        if (alive.expired() || ec == boost::asio::error::operation_aborted) return;
        if (ec && ec != boost::asio::error::would_block) return;
        for (const int id : ParseWatchEvents(watch_events_.get(), n)) {
          for (auto& stream : streams_) {
            const bool tailed = stream->watch_id() >= 0;  // never a second read of a pipe
            if (tailed && (id == kWatchOverflow || stream->watch_id() == id)) stream->Read();
          }
        }
        WatchFiles();
      });
}

void WorkerOutput::Drain(std::chrono::milliseconds grace, std::function<void()> drained) {
  if (draining_) return;
  Start();
  draining_ = true;
  // The workers are reaped: a file still empty stays so; nobody asked for it (issue 23).
  for (const std::filesystem::path& log : removed_if_empty_) {
    std::error_code ec;
    if (std::filesystem::file_size(log, ec) == 0 && !ec) std::filesystem::remove(log, ec);
  }
  drained_ = std::move(drained);
  drain_start_ = std::chrono::steady_clock::now();
  drain_deadline_ = drain_start_ + grace;
  drain_timer_.expires_at(drain_deadline_);
  drain_timer_.async_wait([this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec) {
    if (alive.expired() || ec == boost::asio::error::operation_aborted) return;
    for (auto& stream : streams_) stream->Stop();
  });
  for (auto& stream : streams_) stream->Drain();
  MaybeFinishDrain();
}

void WorkerOutput::OnLogWriteError(const std::filesystem::path& path, int error) {
  log_write_errors_.push_back(LogWriteError{path, ErrorText(error)});
  err_.Write("cpplaunch: cannot write the log file " + path.string() + ": " + ErrorText(error) +
             "; the rest of this stream goes to the console only\n");
}

void WorkerOutput::OnStreamDone(const Stream& stream) {
  if (stream.watch_id() >= 0) Unwatch(watcher_.native_handle(), stream.watch_id());
  if (draining_) MaybeFinishDrain();
}

void WorkerOutput::MaybeFinishDrain() {
  if (flushing_) return;
  for (const auto& stream : streams_) {
    if (!stream->done()) return;
  }
  flushing_ = true;
  drain_timer_.cancel();
  boost::system::error_code ignored;
  watcher_.close(ignored);
  // The consoles get as long again as the pipes had: bounded even if nobody reads them.
  const auto flush_deadline = drain_deadline_ + (drain_deadline_ - drain_start_);
  auto pending = std::make_shared<int>(2);
  auto one_done = [this, pending, alive = std::weak_ptr<int>(alive_)] {
    if (alive.expired() || --*pending > 0) return;
    boost::asio::post(io_, std::exchange(drained_, {}));
  };
  out_.Flush(flush_deadline, one_done);
  err_.Flush(flush_deadline, one_done);
}

}  // namespace cpplaunch
