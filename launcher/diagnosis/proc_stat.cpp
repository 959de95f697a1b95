#include "launcher/diagnosis/proc_stat.h"

#include <vector>

#include "base/text.h"

namespace cpplaunch {
namespace {

// After "pid (comm) ": state is field 0, utime 11, stime 12, cutime 13, cstime 14.
constexpr std::size_t kUtime = 11;
constexpr std::size_t kCstime = 14;
constexpr std::size_t kRss = 21;

std::optional<std::uint64_t> Ticks(std::string_view word) {
  auto value = ParsePythonInt(word);
  if (!value || *value < 0) return std::nullopt;
  return static_cast<std::uint64_t>(*value);
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;
  for (std::string_view word : Split(Strip(text.substr(close + 1)), ' ')) {
    if (!word.empty()) fields.push_back(word);
  }
  if (fields.size() <= kCstime || fields[0].size() != 1) return std::nullopt;
  std::optional<std::uint64_t> ticks[4];
  for (std::size_t i = 0; i < 4; ++i) ticks[i] = Ticks(fields[kUtime + i]);
  for (const auto& tick : ticks) {
    if (!tick) return std::nullopt;
  }
  ProcStat stat{fields[0][0], *ticks[0] + *ticks[1], *ticks[2] + *ticks[3]};
  if (fields.size() > kRss) stat.rss_pages = Ticks(fields[kRss]).value_or(0);
  return stat;
}

}  // namespace cpplaunch
