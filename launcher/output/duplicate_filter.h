#pragma once
// torchrun's --duplicate-stdout-filters / --duplicate-stderr-filters test: a tee'd line is
// duplicated when its text contains any of the filters (a plain substring, case-sensitive).
// Pure: no I/O. Not thread-safe (a reused scratch buffer).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

class DuplicateFilter {
 public:
  explicit DuplicateFilter(std::vector<std::string> filters);

  // True when `text` (one line without its prefix) contains any filter. An empty filter
  // matches every line, as Python's `"" in line` does.
  bool Matches(std::string_view text) const;

  // `lines` holds whole lines, each `prefix_size` bytes of prefix, then the text, then '\n'
  // (what LinePrefixer writes). Appends each line whose text matches, prefix and all, to `out`.
  void Select(std::string_view lines, std::size_t prefix_size, std::string& out) const;

 private:
  std::vector<std::string> filters_;
};

}  // namespace cpplaunch
