#include "base/fifo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/fd_io.h"

namespace cpplaunch {

OpenFifo CreateFifo(const std::filesystem::path& path, unsigned mode) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) ThrowLastError("unlink " + path.string());
  if (::mkfifo(path.c_str(), static_cast<mode_t>(mode)) != 0)
    ThrowLastError("mkfifo " + path.string());
  OpenFifo fifo;
  // The read end first: opening a FIFO's write end without blocking needs a reader.
  fifo.read_end.reset(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fifo.read_end) ThrowLastError("open " + path.string());
  fifo.keep_open.reset(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fifo.keep_open) ThrowLastError("open " + path.string());
  return fifo;
}

}  // namespace cpplaunch
