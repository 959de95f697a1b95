#pragma once
// A named pipe (FIFO) that this process reads and that never reports end-of-file: besides the
// non-blocking read end, the process keeps a write end open, so a reader waiting on it sleeps
// until some writer sends data instead of waking on every writer's close (a FIFO without
// writers is always "readable" at EOF).
//
// Errors throw std::system_error naming the path.

#include <filesystem>

#include "base/unique_fd.h"

namespace cpplaunch {

struct OpenFifo {
  UniqueFd read_end;   // O_RDONLY | O_NONBLOCK | O_CLOEXEC
  UniqueFd keep_open;  // O_WRONLY | O_CLOEXEC: held, never written
};

// Replaces whatever `path` names (as torch's FileTimerServer does) with a new FIFO of mode
// `mode` (umask applies) and opens it.
OpenFifo CreateFifo(const std::filesystem::path& path, unsigned mode);

}  // namespace cpplaunch
