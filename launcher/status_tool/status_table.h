#pragma once
// The table cpplaunch-status prints: a header, one line per row in aligned columns, a '!' in
// the first column of every row that needs a look (a silent rank, a host that did not answer
// or cannot be asked) with the reason in the last column, then one summary line. Pure.

#include <string>

#include "launcher/status_tool/status_rows.h"

namespace cpplaunch::status {

// `silent_after_seconds` is --silent-after, named in the summary when a rank is silent.
std::string RenderStatusTable(const StatusRows& rows, double silent_after_seconds);

// An age for people: "0 s", "59 s", "2 min" (from 120 s on), "3 h" (from 2 h on).
std::string FormatAge(double seconds);

}  // namespace cpplaunch::status
