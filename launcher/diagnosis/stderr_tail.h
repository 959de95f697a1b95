#pragma once
// The last lines of the root cause's stderr.log, shown under the failure summary when the worker
// wrote no error file (no @record): the box alone then says only "To enable traceback see ...",
// and the traceback is in a file whose path the user would have to assemble.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// Pure. The last `count` lines of `text` (a trailing newline does not make an empty line).
std::string LastLines(std::string_view text, std::size_t count);

// "cpplaunch: rank 3 wrote no error file; the last lines of its <path>:\n  line\n  line\n", or
// nullopt when the file is missing or empty. Reads at most the last 16 KiB. Never throws.
std::optional<std::string> StderrTailNote(int global_rank, const std::filesystem::path& stderr_log,
                                          std::size_t count);

}  // namespace cpplaunch
