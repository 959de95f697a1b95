#include "base/fd_io.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cpplaunch {
namespace {

// POSIX allows EAGAIN and EWOULDBLOCK to differ (on Linux they are equal).
bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

// Loops `one` (a write or send of the remaining bytes) over partial transfers and EINTR.
template <typename Op>
IoResult TransferAll(std::string_view bytes, Op one) {
  IoResult result;
  while (result.bytes < bytes.size()) {
    const ssize_t n = one(bytes.data() + result.bytes, bytes.size() - result.bytes);
    if (n >= 0) {
      result.bytes += static_cast<std::size_t>(n);
      continue;
    }
    const int err = errno;  // read at once: any later library call may overwrite errno
    if (err == EINTR) continue;
    result.status = WouldBlock(err) ? IoResult::Status::kWouldBlock : IoResult::Status::kError;
    result.error = WouldBlock(err) ? 0 : err;
    return result;
  }
  return result;
}

template <typename Op>
IoResult ReadOnce(Op one) {
  for (;;) {
    const ssize_t n = one();
    if (n > 0) return {IoResult::Status::kOk, static_cast<std::size_t>(n), 0};
    if (n == 0) return {IoResult::Status::kEof, 0, 0};
    const int err = errno;
    if (err == EINTR) continue;
    if (WouldBlock(err)) return {IoResult::Status::kWouldBlock, 0, 0};
    return {IoResult::Status::kError, 0, err};
  }
}

}  // namespace

IoResult WriteSome(int fd, std::string_view bytes) {
  return TransferAll(bytes, [fd](const char* p, std::size_t n) { return ::write(fd, p, n); });
}

IoResult SendSome(int fd, std::string_view bytes) {
  return TransferAll(bytes,
                     [fd](const char* p, std::size_t n) { return ::send(fd, p, n, MSG_NOSIGNAL); });
}

int WriteAll(int fd, std::string_view bytes, std::chrono::milliseconds stall,
             std::size_t* written) {
  std::size_t done = 0;
  int error = 0;
  while (done < bytes.size()) {
    const IoResult r = WriteSome(fd, bytes.substr(done));
    done += r.bytes;
    if (r.ok()) break;
    if (r.status == IoResult::Status::kError) {
      error = r.error;
      break;
    }
    if (!WaitFd(fd, POLLOUT, stall)) {
      error = ETIMEDOUT;
      break;
    }
  }
  if (written != nullptr) *written = done;
  return error;
}

IoResult ReadSome(int fd, char* buffer, std::size_t size) {
  return ReadOnce([&] { return ::read(fd, buffer, size); });
}

IoResult RecvSome(int fd, char* buffer, std::size_t size) {
  return ReadOnce([&] { return ::recv(fd, buffer, size, 0); });
}

IoResult ReadAt(int fd, char* buffer, std::size_t size, std::uint64_t offset) {
  return ReadOnce([&] { return ::pread(fd, buffer, size, static_cast<off_t>(offset)); });
}

bool WaitFd(int fd, short events, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  // A huge timeout (milliseconds::max()) means "no limit"; the deadline arithmetic would overflow.
  const bool forever = timeout >= std::chrono::hours(24 * 365);
  const auto deadline = forever ? Clock::time_point::max() : Clock::now() + timeout;
  for (;;) {
    int wait_ms = -1;
    if (!forever) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      // poll() takes an int; a longer wait is done as several polls by this loop.
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, wait_ms);
    if (ready > 0) return true;
    // Any poll failure other than EINTR: report ready, so the next I/O call names the error.
    if (ready < 0 && errno != EINTR) return true;
  }
}

int LastError() noexcept { return errno; }

std::string ErrorText(int err) { return std::generic_category().message(err); }

std::system_error SystemError(int err, const std::string& what) {
  return std::system_error(err, std::generic_category(), what);
}

void ThrowLastError(const std::string& what) { throw SystemError(LastError(), what); }

}  // namespace cpplaunch
