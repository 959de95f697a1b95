#include "base/fd_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <string>

#include "base/unique_fd.h"

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

struct Pipe {
  UniqueFd read_end, write_end;
  explicit Pipe(int flags = 0) {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC | flags) == 0);
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
};

TEST_CASE("WriteSome writes everything a pipe takes; ReadSome reads it back, then EOF") {
  Pipe pipe;
  IoResult w = WriteSome(pipe.write_end.get(), "hello");
  CHECK(w.ok());
  CHECK(w.bytes == 5);
  pipe.write_end.reset();
  char buffer[16];
  IoResult r = ReadSome(pipe.read_end.get(), buffer, sizeof buffer);
  CHECK(r.ok());
  CHECK(std::string(buffer, r.bytes) == "hello");
  CHECK(ReadSome(pipe.read_end.get(), buffer, sizeof buffer).status == IoResult::Status::kEof);
}

TEST_CASE("a full non-blocking pipe is kWouldBlock with the bytes that went in") {
  Pipe pipe(O_NONBLOCK);
  const std::string big(1 << 20, 'x');  // larger than any default pipe buffer
  IoResult w = WriteSome(pipe.write_end.get(), big);
  CHECK(w.status == IoResult::Status::kWouldBlock);
  CHECK(w.bytes > 0);
  CHECK(w.bytes < big.size());
  char buffer[8];
  Pipe empty(O_NONBLOCK);
  CHECK(ReadSome(empty.read_end.get(), buffer, sizeof buffer).status ==
        IoResult::Status::kWouldBlock);
}

TEST_CASE("WriteAll gives up with ETIMEDOUT when nobody drains the descriptor") {
  Pipe pipe(O_NONBLOCK);
  const std::string big(1 << 20, 'x');
  std::size_t written = 0;
  CHECK(WriteAll(pipe.write_end.get(), big, milliseconds(20), &written) == ETIMEDOUT);
  CHECK(written > 0);
  CHECK(written < big.size());
}

TEST_CASE("WriteAll waits for a reader and delivers every byte") {
  Pipe pipe(O_NONBLOCK);
  const std::string big(300000, 'y');
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    pipe.write_end.reset();
    ::fcntl(pipe.read_end.get(), F_SETFL, 0);
    std::size_t total = 0;
    char buffer[4096];
    for (;;) {
      IoResult r = ReadSome(pipe.read_end.get(), buffer, sizeof buffer);
      if (!r.ok()) break;
      total += r.bytes;
    }
    ::_exit(total == 300000 ? 0 : 1);
  }
  pipe.read_end.reset();
  CHECK(WriteAll(pipe.write_end.get(), big) == 0);
  pipe.write_end.reset();
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("errors are reported as errno values, never thrown") {
  Pipe pipe;
  pipe.read_end.reset();
  std::signal(SIGPIPE, SIG_IGN);
  IoResult w = WriteSome(pipe.write_end.get(), "x");
  CHECK(w.status == IoResult::Status::kError);
  CHECK(w.error == EPIPE);
  CHECK(WriteAll(pipe.write_end.get(), "x") == EPIPE);
  char buffer[4];
  CHECK(ReadSome(-1, buffer, sizeof buffer).error == EBADF);
}

TEST_CASE("SendSome on a socket whose peer is gone is EPIPE, not a signal") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  UniqueFd mine(fds[0]);
  ::close(fds[1]);
  std::signal(SIGPIPE, SIG_DFL);  // MSG_NOSIGNAL must protect us even so
  IoResult w = SendSome(mine.get(), "x");
  CHECK(w.status == IoResult::Status::kError);
  CHECK(w.error == EPIPE);
}

TEST_CASE("WaitFd: ready when data is there, false when the timeout passes") {
  Pipe pipe;
  CHECK_FALSE(WaitFd(pipe.read_end.get(), POLLIN, milliseconds(10)));
  WriteSome(pipe.write_end.get(), "z");
  CHECK(WaitFd(pipe.read_end.get(), POLLIN, milliseconds(10)));
  char buffer[4];
  IoResult r = ReadSome(pipe.read_end.get(), buffer, sizeof buffer);
  CHECK(std::string(buffer, r.bytes) == "z");
}

TEST_CASE("SystemError says what failed and why") {
  std::system_error e = SystemError(ENOENT, "open /nowhere");
  CHECK(std::string(e.what()) == "open /nowhere: No such file or directory");
  CHECK(e.code().value() == ENOENT);
  CHECK(ErrorText(EACCES) == "Permission denied");
}

}  // namespace
}  // namespace cpplaunch
