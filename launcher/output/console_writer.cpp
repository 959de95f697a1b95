#include "launcher/output/console_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <utility>

#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace cpplaunch {
namespace {

// How long a blocking-mode write waits when someone else made the shared description
// non-blocking and the console is full; after that the chunk is dropped.
constexpr std::chrono::milliseconds kBlockingStall{2000};

// Terminals and pipes can stall forever and are pollable: they get a private non-blocking
// description. Re-opening /proc/self/fd/N creates a new open file description, so
// O_NONBLOCK does not leak to the parent shell or to workers sharing fd N. Regular files
// are excluded on purpose: a second description would have its own file offset.
// O_NOCTTY: an agent that leads a session without a terminal must not acquire this one as its
// controlling terminal by opening it.
UniqueFd OpenPrivateNonBlocking(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return UniqueFd();
  const bool pollable = S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && ::isatty(fd) == 1);
  if (!pollable) return UniqueFd();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return UniqueFd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
}

}  // namespace

bool ConsoleWriter::SameFile(int fd_a, int fd_b) {
  struct stat a {
  }, b{};
  if (::fstat(fd_a, &a) != 0 || ::fstat(fd_b, &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

ConsoleWriter::ConsoleWriter(boost::asio::io_context& io, int fd)
    : io_(io), fd_(fd), async_(io), flush_timer_(io) {
  UniqueFd own = OpenPrivateNonBlocking(fd);
  if (!own) return;  // not a terminal or pipe, or no /proc: the blocking strategy
  boost::system::error_code ec;
  async_.assign(own.get(), ec);
  if (!ec) own.release();  // async_ closes it from now on; on failure `own` does
}

ConsoleWriter::~ConsoleWriter() {
  alive_.reset();
  boost::system::error_code ignored;
  async_.close(ignored);
}

void ConsoleWriter::Write(std::string_view chunk) {
  if (broken_) {
    dropped_bytes_ += chunk.size();
    return;
  }
  if (!async_.is_open()) {
    WriteBlocking(chunk);
    return;
  }
  // Written at once only behind an empty queue: anything else would overtake queued chunks.
  if (queued_bytes() == 0) {
    chunk.remove_prefix(WriteNow(chunk));
    if (chunk.empty()) return;
    if (broken_) {
      dropped_bytes_ += chunk.size();
      return;
    }
  }
  queue_.append(chunk);
  ArmWriteWait();
}

std::size_t ConsoleWriter::WriteNow(std::string_view bytes) {
  const IoResult result = WriteSome(async_.native_handle(), bytes);
  // A full console (kWouldBlock) only means "queue the rest". EPIPE and friends: nobody will
  // ever read this.
  if (result.status == IoResult::Status::kError) broken_ = true;
  return result.bytes;
}

// The descriptor is normally blocking, so WriteAll never waits. It waits (bounded) only when
// someone else set O_NONBLOCK on the description we share with the parent shell.
void ConsoleWriter::WriteBlocking(std::string_view bytes) {
  std::size_t written = 0;
  const int error = WriteAll(fd_, bytes, kBlockingStall, &written);
  if (error == 0) return;
  // A stall (ETIMEDOUT) drops this chunk only: a later one may get through. Any other error
  // means the console is gone.
  if (error != ETIMEDOUT) broken_ = true;
  dropped_bytes_ += bytes.size() - written;
}

void ConsoleWriter::ArmWriteWait() {
  if (waiting_) return;
  waiting_ = true;
  async_.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                    [this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec) {
                      if (alive.expired()) return;
                      waiting_ = false;
                      if (ec == boost::asio::error::operation_aborted) return;
                      if (ec) broken_ = true;
                      OnWritable();
                    });
}

void ConsoleWriter::OnWritable() {
  if (!broken_ && queued_bytes() > 0) {
    queue_head_ += WriteNow(std::string_view(queue_).substr(queue_head_));
  }
  if (broken_) DropQueue();
  if (queue_head_ == queue_.size()) {
    queue_.clear();
    queue_head_ = 0;
  } else if (queue_head_ > kLowWater && queue_head_ > queue_.size() / 2) {
    // The written head is cut off only once it is large and most of the buffer, so the
    // memmove costs O(1) per byte written, not a copy of the queue per write.
    queue_.erase(0, queue_head_);
    queue_head_ = 0;
  }
  NotifyWaiters();
  if (queued_bytes() > 0) ArmWriteWait();
}

void ConsoleWriter::DropQueue() {
  dropped_bytes_ += queued_bytes();
  queue_.clear();
  queue_head_ = 0;
}

void ConsoleWriter::NotifyWaiters() {
  if (queued_bytes() <= kLowWater) {
    for (auto& ready : std::exchange(uncongested_waiters_, {})) boost::asio::post(io_, ready);
  }
  if (queued_bytes() == 0) {
    flush_timer_.cancel();
    for (auto& done : std::exchange(flush_waiters_, {})) boost::asio::post(io_, done);
  }
}

void ConsoleWriter::WhenUncongested(std::function<void()> ready) {
  if (queued_bytes() <= kLowWater) {
    boost::asio::post(io_, std::move(ready));
    return;
  }
  uncongested_waiters_.push_back(std::move(ready));
}

void ConsoleWriter::Flush(std::chrono::steady_clock::time_point deadline,
                          std::function<void()> done) {
  if (queued_bytes() == 0) {
    boost::asio::post(io_, std::move(done));
    return;
  }
  const bool earlier = flush_waiters_.empty() || deadline < flush_timer_.expiry();
  flush_waiters_.push_back(std::move(done));
  if (!earlier) return;
  flush_timer_.expires_at(deadline);
  flush_timer_.async_wait([this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec) {
    if (alive.expired() || ec == boost::asio::error::operation_aborted) return;
    DropQueue();
    NotifyWaiters();
  });
}

}  // namespace cpplaunch
