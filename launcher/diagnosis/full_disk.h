#pragma once
// A full file system under the workers' log files (a small $TMPDIR, -t/-r): each worker's first
// print fails with ENOSPC, its traceback cannot be written either, and it exits 1 without a
// word anywhere (error_file: <N/A>, an empty stderr.log). The failure report then says
// "No space left on device" and where.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace cpplaunch {

// Below this many free bytes a file system counts as full: a worker's first lines and its
// traceback no longer fit.
inline constexpr std::uintmax_t kFullBelow = std::uintmax_t{64} * 1024;

// Pure. The line (without "cpplaunch: ") when `free_bytes` is known and below kFullBelow:
//   "No space left on device: the workers' log files in /tmp/x/attempt_0 could not be written
//    (0 bytes free there); free some space, or put them elsewhere with --log-dir or TMPDIR"
std::optional<std::string> FullDiskNote(const std::filesystem::path& dir,
                                        std::optional<std::uintmax_t> free_bytes);

// The bytes this process may still write under `dir` (root may use the reserved blocks too);
// nullopt when it cannot be read. statvfs(2); never throws.
std::optional<std::uintmax_t> FreeBytes(const std::filesystem::path& dir);

}  // namespace cpplaunch
