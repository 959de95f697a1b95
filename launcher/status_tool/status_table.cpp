#include "launcher/status_tool/status_table.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/text.h"

namespace cpplaunch::status {
namespace {

constexpr size_t kColumns = 12;
using Line = std::array<std::string, kColumns>;

const Line kHeader = {"",      "HOST",     "NODE",        "RANK", "LOCAL", "PID",
                      "STATE", "RESTARTS", "LAST OUTPUT", "RSS",  "CPU",   "NOTE"};

template <class T>
std::string Cell(const std::optional<T>& value) {
  return value ? std::to_string(*value) : "-";
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

std::string OutputCell(const StatusRow& row) {
  if (row.output_age_seconds) return FormatAge(*row.output_age_seconds);
  if (row.no_output_yet && row.mark != RowMark::kNoAnswer && row.mark != RowMark::kNoAddress) {
    return "no output yet";
  }
  return "-";
}

std::string CpuCell(const std::optional<double>& share) {
  if (!share) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", *share * 100);
  return text;
}

std::string Note(const StatusRow& row) {
  switch (row.mark) {
    case RowMark::kSilent:
      return (row.no_output_yet ? "silent: nothing written in " : "silent for ") +
             FormatAge(row.quiet_seconds.value_or(0));
    case RowMark::kNoAnswer:
      return "no answer: " + row.detail;
    case RowMark::kNoAddress:
      return row.detail;
    case RowMark::kNone:
      break;
  }
  return "";
}

Line RowLine(const StatusRow& row) {
  bool host_only = row.mark == RowMark::kNoAnswer || row.mark == RowMark::kNoAddress;
  return {row.mark == RowMark::kNone ? "" : "!",
          row.host,
          Cell(row.node_rank),
          Cell(row.rank),
          Cell(row.local_rank),
          Cell(row.pid),
          row.state.empty() ? "-" : row.state,
          host_only ? "-" : Cell(row.restarts_used),
          OutputCell(row),
          row.rss_bytes ? HumanBytes(*row.rss_bytes) : "-",
          CpuCell(row.cpu_share),
          Note(row)};
}

std::string Layout(const std::vector<Line>& lines) {
  std::array<size_t, kColumns> widths{};
  for (const Line& line : lines) {
    for (size_t i = 0; i < kColumns; ++i) widths[i] = std::max(widths[i], line[i].size());
  }
  std::string text;
  for (const Line& line : lines) {
    std::string out;
    for (size_t i = 0; i < kColumns; ++i) {
      out += line[i];
      if (i + 1 < kColumns) out += std::string(widths[i] - line[i].size() + 2, ' ');
    }
    // The last column is often empty: no trailing blanks to wrap a narrow terminal.
    out.erase(out.find_last_not_of(' ') + 1);
    text += out + "\n";
  }
  return text;
}

std::string SummaryLine(const StatusSummary& summary, double silent_after) {
  std::string line = std::to_string(summary.hosts_answered) + " of " +
                     std::to_string(summary.hosts_known) + " hosts answered, " +
                     std::to_string(summary.ranks) + " ranks, " + std::to_string(summary.silent) +
                     " silent";
  if (summary.silent > 0) line += " (no output for over " + Seconds(silent_after) + ")";
  if (summary.hosts_not_asked > 0) {
    line += "; " + std::to_string(summary.hosts_not_asked) + " more hosts not asked";
  }
  if (!summary.last_failure.empty()) line += "; last failure: " + summary.last_failure;
  if (!summary.hosts_hidden.empty()) line += "; " + summary.hosts_hidden;
  return line + "\n";
}

}  // namespace

std::string FormatAge(double seconds) {
  double whole = std::floor(std::max(0.0, seconds));
  char text[32];
  if (whole < 120) {
    std::snprintf(text, sizeof text, "%.0f s", whole);
  } else if (whole < 7200) {
    std::snprintf(text, sizeof text, "%.0f min", std::floor(whole / 60));
  } else {
    std::snprintf(text, sizeof text, "%.0f h", std::floor(whole / 3600));
  }
  return text;
}

std::string RenderStatusTable(const StatusRows& rows, double silent_after_seconds) {
  std::vector<Line> lines{kHeader};
  for (const StatusRow& row : rows.rows) lines.push_back(RowLine(row));
  return Layout(lines) + SummaryLine(rows.summary, silent_after_seconds);
}

}  // namespace cpplaunch::status
