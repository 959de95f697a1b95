#include "base/unique_fd.h"

#include <unistd.h>

namespace cpplaunch {

void UniqueFd::reset(int fd) noexcept {
  // close() is not retried on EINTR: on Linux the descriptor is released even then, and a retry
  // could close a descriptor another thread has just been given.
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

}  // namespace cpplaunch
