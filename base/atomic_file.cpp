#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

// A new file of our own, never an existing one: the name is predictable, so whoever can write
// the directory can plant a symlink (or a file) there. O_EXCL refuses whatever exists, and
// O_NOFOLLOW says so for a symlink even where O_EXCL alone would be the only guard. A leftover
// from a dead process with this pid is removed once (unlink removes a symlink, not its target)
// and the create is tried again; if something is planted again, the open fails.
UniqueFd CreateTemporary(const std::string& temp) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::open(temp.c_str(), kFlags, 0666));
  if (!fd && LastError() == EEXIST && ::unlink(temp.c_str()) == 0) {
    fd = UniqueFd(::open(temp.c_str(), kFlags, 0666));
  }
  if (!fd) ThrowLastError("open " + temp);
  return fd;
}

}  // namespace

void ReplaceFile(const std::filesystem::path& path, std::string_view bytes) {
  // Beside the target, so rename() stays on one file system and replaces atomically; the pid
  // keeps the temporaries of two processes writing the same path apart.
  const std::string temp = path.string() + ".tmp." + std::to_string(::getpid());
  UniqueFd fd = CreateTemporary(temp);
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
