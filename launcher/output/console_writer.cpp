#include "launcher/output/console_writer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <utility>

namespace cpplaunch {
namespace {

// How long a blocking-mode write waits when someone else made the shared description
// non-blocking and the console is full; after that the chunk is dropped.
constexpr int kBlockingStallMs = 2000;

// Terminals and pipes can stall forever and are pollable: they get a private non-blocking
// description. Re-opening /proc/self/fd/N creates a new open file description, so
// O_NONBLOCK does not leak to the parent shell or to workers sharing fd N. Regular files
// are excluded on purpose: a second description would have its own file offset.
int OpenPrivateNonBlocking(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -1;
  const bool pollable = S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && ::isatty(fd) == 1);
  if (!pollable) return -1;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
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
  const int own = OpenPrivateNonBlocking(fd);
  if (own < 0) return;
  boost::system::error_code ec;
  async_.assign(own, ec);
  if (ec) ::close(own);
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
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(async_.native_handle(), bytes.data() + done, bytes.size() - done);
    if (n >= 0) {
      done += static_cast<std::size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      break;
    } else if (errno != EINTR) {
      broken_ = true;  // EPIPE and friends: nobody will ever read this
      break;
    }
  }
  return done;
}

void ConsoleWriter::WriteBlocking(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, kBlockingStallMs) > 0) continue;
    } else {
      broken_ = true;
    }
    dropped_bytes_ += bytes.size();
    return;
  }
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
