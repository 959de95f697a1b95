#include "base/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <utility>

namespace cpplaunch {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST_CASE("UniqueFd closes its descriptor once, when it goes out of scope") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[1]);
  {
    UniqueFd owner(fds[0]);
    CHECK(owner.valid());
    CHECK(owner.get() == fds[0]);
  }
  CHECK_FALSE(IsOpen(fds[0]));
}

TEST_CASE("UniqueFd moves ownership; the moved-from owner closes nothing") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  UniqueFd moved(std::move(read_end));
  CHECK_FALSE(read_end.valid());
  CHECK(moved.get() == fds[0]);
  write_end = std::move(moved);  // closes the old write end, takes the read end
  CHECK_FALSE(IsOpen(fds[1]));
  CHECK(IsOpen(fds[0]));
  write_end.reset();
  CHECK_FALSE(IsOpen(fds[0]));
  CHECK(write_end.get() == -1);
}

TEST_CASE("UniqueFd::release hands the descriptor over without closing it") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  int taken;
  {
    UniqueFd owner(fds[0]);
    taken = owner.release();
    CHECK_FALSE(owner);
  }
  CHECK(IsOpen(taken));
  ::close(taken);
  ::close(fds[1]);
}

}  // namespace
}  // namespace cpplaunch
