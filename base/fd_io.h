#pragma once
// The byte I/O on descriptors that the rest of the tree uses instead of raw read/write/send/recv
// and errno. One policy everywhere:
//   * EINTR is retried, always; a signal never surfaces as an error;
//   * EAGAIN/EWOULDBLOCK is "not now": the *Some calls report it as kWouldBlock with what they
//     moved so far; WriteAll waits (poll) for the descriptor to take more, up to `stall` for
//     each wait, and gives up with ETIMEDOUT after that;
//   * every other failure is reported as its errno value; nothing here throws or logs.
// Descriptors are borrowed, never closed (UniqueFd owns them). SIGPIPE: SendSome passes
// MSG_NOSIGNAL; WriteSome/WriteAll on a pipe rely on the process ignoring SIGPIPE (main does).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace cpplaunch {

struct IoResult {
  enum class Status { kOk, kWouldBlock, kEof, kError };
  Status status = Status::kOk;
  std::size_t bytes = 0;  // moved by this call (may be > 0 with kWouldBlock)
  int error = 0;          // errno value when status is kError

  bool ok() const { return status == Status::kOk; }
};

// Writes as much of `bytes` as the descriptor takes now (loops over partial writes).
// kOk: everything written; kWouldBlock: a non-blocking descriptor is full; kError: errno.
IoResult WriteSome(int fd, std::string_view bytes);
// The same for a socket, with MSG_NOSIGNAL (a vanished peer is EPIPE, not a signal).
IoResult SendSome(int fd, std::string_view bytes);

// Writes all of `bytes`, waiting for a non-blocking descriptor to drain (each wait at most
// `stall`). Returns 0 on success, else the errno value (ETIMEDOUT after a stall); `*written`
// (if given) says how much was written either way.
int WriteAll(int fd, std::string_view bytes,
             std::chrono::milliseconds stall = std::chrono::milliseconds::max(),
             std::size_t* written = nullptr);

// One read(2) (or recv(2) for RecvSome) of at most `size` bytes. kOk with bytes > 0: data;
// kEof: the peer closed (bytes == 0); kWouldBlock: nothing there yet; kError: errno.
IoResult ReadSome(int fd, char* buffer, std::size_t size);
IoResult RecvSome(int fd, char* buffer, std::size_t size);
// One pread(2) at `offset` (the file position is untouched). kEof: nothing at or past `offset`.
IoResult ReadAt(int fd, char* buffer, std::size_t size, std::uint64_t offset);

// Waits until `fd` has one of `events` (POLLIN, POLLOUT), or an error or hang-up that the next
// call will report, or `timeout` passes. True when ready; false on timeout.
bool WaitFd(int fd, short events, std::chrono::milliseconds timeout);

// The current errno, read once (so callers never touch errno themselves).
int LastError() noexcept;
// strerror(err) as text ("Connection refused").
std::string ErrorText(int err);
// std::system_error for `err` whose what() is "<what>: <strerror text>".
std::system_error SystemError(int err, const std::string& what);
// Throws SystemError(LastError(), what).
[[noreturn]] void ThrowLastError(const std::string& what);

}  // namespace cpplaunch
