#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace cpplaunch {
namespace {

// Removes the temporary and throws `err`. The caller reads errno first: unlink may change it.
[[noreturn]] void Abandon(const std::string& temp, int err, const std::string& what) {
  ::unlink(temp.c_str());
  throw SystemError(err, what);
}

}  // namespace

void ReplaceFile(const std::filesystem::path& path, std::string_view bytes) {
  // Beside the target, so rename() stays on one file system and replaces atomically; the pid
  // keeps the temporaries of two processes writing the same path apart.
  const std::string temp = path.string() + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (!fd) ThrowLastError("open " + temp);
  if (const int err = WriteAll(fd.get(), bytes); err != 0) {
    fd.reset();
    Abandon(temp, err, "write " + temp);
  }
  // close() is checked here, unlike in UniqueFd: on NFS and similar file systems a deferred
  // write error surfaces only at close, and renaming then would publish a truncated file.
  if (::close(fd.release()) != 0) {
    const int err = LastError();
    Abandon(temp, err, "close " + temp);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = LastError();
    Abandon(temp, err, "rename to " + path.string());
  }
}

}  // namespace cpplaunch
