#include "launcher/output/duplicate_filter.h"

namespace cpplaunch {

DuplicateFilter::DuplicateFilter(std::vector<std::string> filters) : filters_(std::move(filters)) {}

bool DuplicateFilter::Matches(std::string_view text) const {
  for (const std::string& filter : filters_) {
    if (text.find(filter) != std::string_view::npos) return true;
  }
  return false;
}

void DuplicateFilter::Select(std::string_view lines, std::size_t prefix_size,
                             std::string& out) const {
  while (!lines.empty()) {
    const std::size_t end = lines.find('\n');
    const std::size_t size = end == std::string_view::npos ? lines.size() : end + 1;
    const std::string_view line = lines.substr(0, size);
    const std::size_t text_end = line.back() == '\n' ? line.size() - 1 : line.size();
    const std::size_t text_start = std::min(prefix_size, text_end);
    if (Matches(line.substr(text_start, text_end - text_start))) out.append(line);
    lines.remove_prefix(size);
  }
}

}  // namespace cpplaunch
