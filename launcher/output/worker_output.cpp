#include "launcher/output/worker_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <system_error>
#include <utility>

#include "base/fd_io.h"

namespace cpplaunch {
namespace {

UniqueFd OpenForWriting(const std::filesystem::path& path, bool truncate) {
  const int flags = O_WRONLY | O_CLOEXEC | (truncate ? O_CREAT | O_TRUNC : 0);
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

// One tee'd stream: pipe -> (raw) log file + (prefixed) console.
class WorkerOutput::Stream {
 public:
  // The stream_descriptor adopts the pipe's read end; `file` (may be empty) is owned until
  // Finish().
  Stream(WorkerOutput& owner, UniqueFd pipe, UniqueFd file, std::filesystem::path path,
         ConsoleWriter& console, std::string prefix, int local_rank, bool is_stderr)
      : owner_(owner),
        local_rank_(local_rank),
        is_stderr_(is_stderr),
        pipe_(owner.io_, pipe.release()),
        file_(std::move(file)),
        path_(std::move(path)),
        console_(console),
        prefixer_(std::move(prefix)),
        buffer_(new char[kReadChunk]) {}

  bool done() const { return done_; }

  void Read() {
    if (done_) return;
    pipe_.async_read_some(boost::asio::buffer(buffer_.get(), kReadChunk),
                          [this, alive = std::weak_ptr<int>(owner_.alive_)](
                              boost::system::error_code ec, std::size_t n) {
                            if (alive.expired() || done_) return;
                            Consume(n);
                            if (ec) {
                              Finish();
                            } else if (console_.congested()) {
                              // Backpressure: the pipe fills and the worker blocks in write(),
                              // as it would writing straight to a slow console.
                              console_.WhenUncongested([this, alive] {
                                if (!alive.expired()) Read();
                              });
                            } else {
                              Read();
                            }
                          });
  }

  // Gives up waiting for EOF: takes whatever the pipe holds right now, then finishes.
  void Stop() {
    if (done_) return;
    boost::system::error_code ec;
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

  void Consume(std::size_t n) {
    if (n == 0) return;
    owner_.bytes_read_ += n;
    const std::string_view bytes(buffer_.get(), n);
    if (owner_.observer_) owner_.observer_(local_rank_, is_stderr_, bytes);
    WriteToFile(bytes);
    prefixer_.Feed(bytes, lines_);
    WriteLines();
  }

  // Appends raw bytes to the log file. A full disk must not stop the console copy: on an error
  // the file is closed, the owner reports it (once: the file is gone), and the rest of the
  // stream only goes to the console.
  void WriteToFile(std::string_view bytes) {
    if (!file_) return;
    const IoResult result = WriteSome(file_.get(), bytes);
    if (result.ok()) return;
    file_.reset();
    owner_.OnLogWriteError(path_, result.error);
  }

  void WriteLines() {
    if (lines_.empty()) return;
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
    owner_.OnStreamDone();
  }

  WorkerOutput& owner_;
  int local_rank_;
  bool is_stderr_;
  boost::asio::posix::stream_descriptor pipe_;
  UniqueFd file_;
  std::filesystem::path path_;
  ConsoleWriter& console_;
  LinePrefixer prefixer_;
  std::unique_ptr<char[]> buffer_;
  std::string lines_;  // reused output buffer: no allocation per chunk in the steady state
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
    : io_(io), out_(out), err_(err), drain_timer_(io) {}

WorkerOutput::~WorkerOutput() {
  // Handlers still queued on the loop see the expired guard; the descriptors close with their
  // owners (streams_, child_fds_) after this body.
  alive_.reset();
}

ChildStdio WorkerOutput::Open(const WorkerStreams& streams) {
  // Everything is built first and committed at the end, so a failure leaks nothing.
  std::vector<UniqueFd> child_ends;
  std::vector<std::unique_ptr<Stream>> new_streams;
  auto open_one = [&](StreamRoute route, const std::filesystem::path& log, ConsoleWriter& console,
                      bool is_stderr) -> int {
    switch (route) {
      case StreamRoute::kInherit:
        return -1;
      case StreamRoute::kDiscard:
        child_ends.push_back(OpenForWriting("/dev/null", false));
        break;
      case StreamRoute::kFile:
        child_ends.push_back(OpenForWriting(log, true));
        break;
      case StreamRoute::kTee: {
        Pipe pipe = MakePipe();
        UniqueFd file = log.empty() ? UniqueFd() : OpenForWriting(log, true);
        new_streams.push_back(
            std::make_unique<Stream>(*this, std::move(pipe.read_end), std::move(file), log, console,
                                     streams.prefix, streams.local_rank, is_stderr));
        child_ends.push_back(std::move(pipe.write_end));
        break;
      }
    }
    return child_ends.back().get();
  };
  ChildStdio stdio;
  stdio.stdout_fd = open_one(streams.stdout_route, streams.stdout_log, out_, false);
  stdio.stderr_fd = open_one(streams.stderr_route, streams.stderr_log, err_, true);
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
}

void WorkerOutput::Drain(std::chrono::milliseconds grace, std::function<void()> drained) {
  if (draining_) return;
  Start();
  draining_ = true;
  drained_ = std::move(drained);
  drain_start_ = std::chrono::steady_clock::now();
  drain_deadline_ = drain_start_ + grace;
  drain_timer_.expires_at(drain_deadline_);
  drain_timer_.async_wait([this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec) {
    if (alive.expired() || ec == boost::asio::error::operation_aborted) return;
    for (auto& stream : streams_) stream->Stop();
  });
  MaybeFinishDrain();
}

void WorkerOutput::OnLogWriteError(const std::filesystem::path& path, int error) {
  log_write_errors_.push_back(LogWriteError{path, ErrorText(error)});
  err_.Write("cpplaunch: cannot write the log file " + path.string() + ": " + ErrorText(error) +
             "; the rest of this stream goes to the console only\n");
}

void WorkerOutput::OnStreamDone() {
  if (draining_) MaybeFinishDrain();
}

void WorkerOutput::MaybeFinishDrain() {
  if (flushing_) return;
  for (const auto& stream : streams_) {
    if (!stream->done()) return;
  }
  flushing_ = true;
  drain_timer_.cancel();
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
