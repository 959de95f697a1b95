#pragma once
// Modification watches on files (Linux inotify), for an event loop that tails files a child
// process appends to: the inotify descriptor becomes readable when a watched file is written,
// so an idle tail costs no wake-ups (no polling). Thin wrappers; errors as in fd_io.h.

#include <cstddef>
#include <filesystem>
#include <vector>

#include "base/unique_fd.h"

namespace cpplaunch {

// A non-blocking, close-on-exec inotify descriptor. Throws std::system_error (its text names
// the sysctl when the per-user instance limit is the cause).
UniqueFd OpenFileWatcher();

// Watches `path` for writes (IN_MODIFY); returns the watch id that ParseWatchEvents reports.
// Throws std::system_error (e.g. the file does not exist; or the per-user watch limit is
// reached, which the text names, since its errno reads "No space left on device").
int WatchForWrites(int watcher, const std::filesystem::path& path);

// Ends one watch (the kernel then queues no more events for it); failures are ignored.
void Unwatch(int watcher, int watch_id) noexcept;

// Pure. The watch ids of the inotify events in `bytes` (what one read() of the descriptor
// returned), in order; kWatchOverflow when the kernel's queue overflowed and events were lost
// (the reader must then look at every watched file).
inline constexpr int kWatchOverflow = -1;
std::vector<int> ParseWatchEvents(const char* bytes, std::size_t size);

}  // namespace cpplaunch
