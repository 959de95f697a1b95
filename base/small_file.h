#pragma once
// Reading a small file whole: /proc and /sys entries, cgroup control files, the head of a log.
// One open(2) and a read(2) or two, where a std::ifstream costs several times as much (its
// buffer and locale): the pre-flight checks of every launch read a handful of these (measured
// on the launch path: the PID limits' files in 90 us with ifstream). Never throws on I/O.
// Threads: any.

#include <cstddef>
#include <optional>
#include <string>

namespace cpplaunch {

// The file's bytes, at most `limit` of them; nullopt when it cannot be opened or read (a process
// that is gone, a file the kernel lacks, a directory).
std::optional<std::string> ReadSmallFile(const std::string& path,
                                         std::size_t limit = std::size_t{1} << 20);

}  // namespace cpplaunch
