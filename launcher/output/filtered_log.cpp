#include "launcher/output/filtered_log.h"

#include <fcntl.h>

#include "base/fd_io.h"

namespace cpplaunch {

FilteredLog::FilteredLog(std::vector<std::string> filters, std::filesystem::path path,
                         OnError on_error)
    : filter_(std::move(filters)), path_(std::move(path)), on_error_(std::move(on_error)) {}

void FilteredLog::Write(std::string_view lines, std::size_t prefix_size) {
  if (failed_) return;
  selected_.clear();
  filter_.Select(lines, prefix_size, selected_);
  if (selected_.empty()) return;
  if (!fd_) {
    fd_.reset(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666));
    if (!fd_) return Fail(LastError());
  }
  const IoResult result = WriteSome(fd_.get(), selected_);
  if (!result.ok()) Fail(result.error);
}

void FilteredLog::Fail(int error) {
  failed_ = true;
  fd_.reset();
  if (on_error_) on_error_(path_, error);
}

}  // namespace cpplaunch
