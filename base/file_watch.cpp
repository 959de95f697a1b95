#include "base/file_watch.h"

#include <sys/inotify.h>

#include <cerrno>
#include <cstring>

#include "base/fd_io.h"

namespace cpplaunch {

UniqueFd OpenFileWatcher() {
  UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (fd) return fd;
  const int err = LastError();
  // EMFILE here is a per-user limit, not the fd table: say which one.
  throw SystemError(err, err == EMFILE ? "inotify_init1 (the per-user limit of inotify instances, "
                                         "sysctl fs.inotify.max_user_instances, is reached)"
                                       : "inotify_init1");
}

int WatchForWrites(int watcher, const std::filesystem::path& path) {
  const int id = ::inotify_add_watch(watcher, path.c_str(), IN_MODIFY);
  if (id >= 0) return id;
  const int err = LastError();
  // ENOSPC here is the per-user watch limit, not a full disk: say so.
  throw SystemError(err, "inotify_add_watch " + path.string() +
                             (err == ENOSPC ? " (the per-user limit of inotify watches, sysctl "
                                              "fs.inotify.max_user_watches, is reached)"
                                            : ""));
}

void Unwatch(int watcher, int watch_id) noexcept { (void)::inotify_rm_watch(watcher, watch_id); }

std::vector<int> ParseWatchEvents(const char* bytes, std::size_t size) {
  std::vector<int> ids;
  std::size_t at = 0;
  while (size - at >= sizeof(inotify_event)) {
    inotify_event event;
    std::memcpy(&event, bytes + at, sizeof event);  // the buffer need not be aligned
    ids.push_back((event.mask & IN_Q_OVERFLOW) ? kWatchOverflow : event.wd);
    at += sizeof event + event.len;
  }
  return ids;
}

}  // namespace cpplaunch
