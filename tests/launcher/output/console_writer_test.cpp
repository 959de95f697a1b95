#include "launcher/output/console_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace cpplaunch {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Runs the loop until `done` holds or `timeout` passes; returns done().
template <typename Pred>
bool RunUntil(boost::asio::io_context& io, Pred done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done() && Clock::now() < deadline) {
    io.restart();
    io.run_for(5ms);
  }
  return done();
}

struct IgnoreSigpipe {
  IgnoreSigpipe() { ::signal(SIGPIPE, SIG_IGN); }
} ignore_sigpipe;  // as the agent does: a vanished console reader must not kill the process

// A console on the blocking strategy (a socket) whose shared description someone else made
// non-blocking, filled until it takes nothing more.
struct FullSocketConsole {
  UniqueFd reader;
  UniqueFd console;

  FullSocketConsole() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    reader.reset(fds[0]);
    console.reset(fds[1]);
    REQUIRE(::fcntl(console.get(), F_SETFL, ::fcntl(console.get(), F_GETFL) | O_NONBLOCK) == 0);
    const std::string filler(65536, 'f');
    while (WriteSome(console.get(), filler).ok()) {
    }
  }

  // Reads until the socket is empty; returns what was read.
  std::string Drain() {
    REQUIRE(::fcntl(reader.get(), F_SETFL, ::fcntl(reader.get(), F_GETFL) | O_NONBLOCK) == 0);
    std::string data;
    char buffer[65536];
    for (;;) {
      const IoResult r = ReadSome(reader.get(), buffer, sizeof(buffer));
      if (!r.ok()) break;
      data.append(buffer, r.bytes);
    }
    return data;
  }
};

}  // namespace

TEST_CASE("ConsoleWriter never blocks on a console nobody reads, and Flush is bounded",
          "[launcher][output]") {
  boost::asio::io_context io;
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  {
    ConsoleWriter writer(io, fds[1]);
    REQUIRE(writer.asynchronous());
    const std::string chunk(65536, 'z');
    const auto start = Clock::now();
    for (int i = 0; i < 200; ++i) writer.Write(chunk);  // 12.5 MiB, far more than the pipe holds
    CHECK(Clock::now() - start < 2s);
    CHECK(writer.congested());
    bool flushed = false;
    writer.Flush(Clock::now() + 100ms, [&] { flushed = true; });
    REQUIRE(RunUntil(
        io, [&] { return flushed; }, 3s));
    CHECK(writer.dropped_bytes() > 0);
    CHECK(writer.queued_bytes() == 0);
    // The shared descriptor is left blocking: only the private one is non-blocking.
    CHECK((::fcntl(fds[1], F_GETFL) & O_NONBLOCK) == 0);
  }
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("ConsoleWriter::SameFile tells a shared console from separate ones",
          "[launcher][output]") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  const int copy = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 0);
  CHECK(ConsoleWriter::SameFile(fds[1], copy));
  CHECK(ConsoleWriter::SameFile(fds[0], fds[1]));  // both ends are one pipe inode
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  CHECK_FALSE(ConsoleWriter::SameFile(fds[1], null_fd));
  CHECK_FALSE(ConsoleWriter::SameFile(fds[1], -1));
  for (int fd : {fds[0], fds[1], copy, null_fd}) ::close(fd);
}

TEST_CASE("ConsoleWriter drops output once the reader is gone", "[launcher][output]") {
  boost::asio::io_context io;
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  {
    ConsoleWriter writer(io, fds[1]);
    ::close(fds[0]);
    writer.Write("lost\n");
    writer.Write("also lost\n");
    CHECK(writer.dropped_bytes() == 15);
    bool flushed = false;
    writer.Flush(Clock::now() + 1s, [&] { flushed = true; });
    CHECK(RunUntil(
        io, [&] { return flushed; }, 2s));
  }
  ::close(fds[1]);
}

TEST_CASE("ConsoleWriter's blocking strategy drops a chunk after its stall bound and goes on",
          "[launcher][output]") {
  boost::asio::io_context io;
  FullSocketConsole socket;
  ConsoleWriter writer(io, socket.console.get());
  REQUIRE_FALSE(writer.asynchronous());  // a socket: plain writes, bounded by the stall wait
  const auto start = Clock::now();
  writer.Write(std::string(100, 'x'));
  const auto took = Clock::now() - start;
  CHECK(took >= 1900ms);  // the stall bound is 2 s
  CHECK(took < 10s);
  CHECK(writer.dropped_bytes() == 100);
  // A stall is not a broken console: once the reader catches up, output flows again.
  const std::string backlog = socket.Drain();
  CHECK(backlog.find('x') == std::string::npos);  // the dropped chunk left nothing behind
  writer.Write("after the stall\n");
  CHECK(writer.dropped_bytes() == 100);
  CHECK(socket.Drain() == "after the stall\n");
}

TEST_CASE("ConsoleWriter's blocking strategy drops everything once the reader is gone",
          "[launcher][output]") {
  boost::asio::io_context io;
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  UniqueFd reader(fds[0]);
  UniqueFd console(fds[1]);
  ConsoleWriter writer(io, console.get());
  REQUIRE_FALSE(writer.asynchronous());
  writer.Write("seen\n");
  CHECK(writer.dropped_bytes() == 0);
  reader.reset();
  writer.Write("lost\n");  // EPIPE: the console is broken from now on
  CHECK(writer.dropped_bytes() == 5);
  writer.Write("also lost\n");
  CHECK(writer.dropped_bytes() == 15);
}

}  // namespace cpplaunch
