#pragma once
// Writes chunks of whole lines to one of the agent's own output streams (fd 1 or 2) so that a
// stalled console (a terminal on Ctrl-S, a pipe nobody reads) never blocks the io_context
// forever, and without setting O_NONBLOCK on the descriptor the agent shares with its parent
// shell and with workers that inherit it.
//
// The strategy is chosen at construction from fstat(fd):
// - regular files and character devices other than terminals (e.g. /dev/null), and sockets:
//   plain blocking write() (a disk write does not stall indefinitely);
// - terminals and pipes/FIFOs: a private non-blocking open file description obtained by
//   re-opening /proc/self/fd/<fd>; chunks are written at once when possible, the rest is queued
//   and written when epoll says the console is writable. If the re-open fails, blocking write().
//
// Every chunk is written contiguously, in Write() order: two chunks never interleave. After a
// write error (EPIPE: the reader went away) further output is dropped and counted.
// All methods: loop thread only. Callbacks run on the loop thread, never inline.

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

class ConsoleWriter {
 public:
  // Producers should stop reading worker pipes above this many queued bytes (backpressure,
  // as a worker writing straight to the console would feel) and resume below kLowWater.
  static constexpr std::size_t kHighWater = std::size_t{8} << 20;
  static constexpr std::size_t kLowWater = std::size_t{1} << 20;

  // True when both descriptors refer to the same file (e.g. `2>&1`, or one terminal). The agent
  // then uses one writer for both streams so stdout and stderr lines cannot split each other.
  static bool SameFile(int fd_a, int fd_b);

  // `fd` stays owned by the caller and must stay open while this object lives.
  ConsoleWriter(boost::asio::io_context& io, int fd);
  ~ConsoleWriter();
  ConsoleWriter(const ConsoleWriter&) = delete;
  ConsoleWriter& operator=(const ConsoleWriter&) = delete;

  // Writes `chunk` (or queues what the console does not take now). Never blocks on a stalled
  // terminal or pipe.
  void Write(std::string_view chunk);

  // True when more than kHighWater bytes are queued.
  bool congested() const { return queued_bytes() > kHighWater; }
  // Calls `ready` once fewer than kLowWater bytes are queued (posted at once if not congested).
  void WhenUncongested(std::function<void()> ready);
  // Calls `done` once everything queued has been written, or at `deadline`, whichever comes
  // first; at the deadline the unwritten rest is dropped.
  void Flush(std::chrono::steady_clock::time_point deadline, std::function<void()> done);

  std::size_t queued_bytes() const { return queue_.size() - queue_head_; }
  std::uint64_t dropped_bytes() const { return dropped_bytes_; }
  bool asynchronous() const { return async_.is_open(); }

 private:
  std::size_t WriteNow(std::string_view bytes);  // returns bytes written; may mark broken_
  void WriteBlocking(std::string_view bytes);
  void ArmWriteWait();
  void OnWritable();
  void DropQueue();
  void NotifyWaiters();

  boost::asio::io_context& io_;
  int fd_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // handlers hold a weak_ptr to it
  boost::asio::posix::stream_descriptor async_;            // open only in the asynchronous strategy
  boost::asio::steady_timer flush_timer_;
  std::string queue_;
  std::size_t queue_head_ = 0;
  bool waiting_ = false;
  bool broken_ = false;
  std::uint64_t dropped_bytes_ = 0;
  std::vector<std::function<void()>> uncongested_waiters_;
  std::vector<std::function<void()>> flush_waiters_;
};

}  // namespace cpplaunch
