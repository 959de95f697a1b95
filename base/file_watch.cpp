#include "base/file_watch.h"

#include <sys/inotify.h>

#include <cstring>

#include "base/fd_io.h"

namespace cpplaunch {

UniqueFd OpenFileWatcher() {
  UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd) ThrowLastError("inotify_init1");
  return fd;
}

int WatchForWrites(int watcher, const std::filesystem::path& path) {
  const int id = ::inotify_add_watch(watcher, path.c_str(), IN_MODIFY);
  if (id < 0) ThrowLastError("inotify_add_watch " + path.string());
  return id;
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
