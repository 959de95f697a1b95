#include "base/crypto/random_bytes.h"

#include <sys/random.h>

#include <cerrno>

#include "base/fd_io.h"

namespace cpplaunch {

std::string RandomBytes(size_t count) {
  std::string bytes(count, '\0');
  size_t filled = 0;
  while (filled < count) {
    ssize_t got = ::getrandom(bytes.data() + filled, count - filled, 0);
    if (got < 0) {
      int error = LastError();
      if (error == EINTR) continue;
      throw SystemError(error, "getrandom");
    }
    filled += static_cast<size_t>(got);
  }
  return bytes;
}

}  // namespace cpplaunch
