#pragma once
// The fields of /proc/<pid>/stat the agent uses: the scheduler state and the CPU time. Pure.

#include <cstdint>
#include <optional>
#include <string_view>

namespace cpplaunch {

struct ProcStat {
  char state = '\0';  // 'R', 'S', 'D', 'Z', ...
  // Clock ticks (sysconf(_SC_CLK_TCK)) spent by the process, and by its children it has reaped.
  std::uint64_t own_ticks = 0;       // utime + stime
  std::uint64_t children_ticks = 0;  // cutime + cstime
  std::uint64_t rss_pages = 0;       // resident set size, in pages
};

// Parses one /proc/<pid>/stat line. The command name (field 2) may contain spaces and ')', so
// fields are counted after its last ')'. nullopt for text that does not have the fields.
std::optional<ProcStat> ParseProcStat(std::string_view text);

}  // namespace cpplaunch
