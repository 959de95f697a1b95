#pragma once
// The file that --duplicate-stdout-filters (or -stderr-) writes: filtered_stdout.log (or
// filtered_stderr.log) in the attempt's log directory, shared by every tee'd worker stream of
// that kind, holding the matching lines as the console shows them ("[default0]:...").
// One writer per line batch, on the agent's loop thread (not thread-safe). Blocking writes to a
// regular file, like the tee'd per-rank logs.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "launcher/output/duplicate_filter.h"

namespace cpplaunch {

class FilteredLog {
 public:
  // Told once when the file cannot be created or written any more (errno); nothing more is
  // written then.
  using OnError = std::function<void(const std::filesystem::path&, int)>;

  // `path` is created (truncated) with the first matching line, not before: an attempt in
  // which nothing matched leaves no empty file behind.
  FilteredLog(std::vector<std::string> filters, std::filesystem::path path, OnError on_error);

  // Appends the matching lines of `lines` (whole prefixed lines, see DuplicateFilter::Select).
  void Write(std::string_view lines, std::size_t prefix_size);

 private:
  void Fail(int error);

  DuplicateFilter filter_;
  std::filesystem::path path_;
  OnError on_error_;
  UniqueFd fd_;
  bool failed_ = false;
  std::string selected_;  // reused: no allocation per batch in the steady state
};

}  // namespace cpplaunch
