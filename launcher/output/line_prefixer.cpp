#include "launcher/output/line_prefixer.h"

#include <cstring>
#include <utility>

#include "base/text.h"

namespace cpplaunch {
namespace {

std::optional<std::string> PrefixField(std::string_view name, std::string_view role, int rank,
                                       int local_rank) {
  if (name == "role_name") return std::string(role);
  if (name == "rank") return std::to_string(rank);
  if (name == "local_rank") return std::to_string(local_rank);
  return std::nullopt;
}

}  // namespace

std::string FormatLinePrefix(std::optional<std::string_view> prefix_template, std::string_view role,
                             int rank, int local_rank) {
  // torchrun's header when TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE is unset, or empty: torchrun
  // tests the template's truth (`if self._log_line_prefix_template:`), so "" is no template.
  if (!prefix_template || prefix_template->empty()) {
    return "[" + std::string(role) + std::to_string(local_rank) + "]:";
  }
  // Python's string.Template.safe_substitute: unknown or malformed placeholders stay verbatim.
  return SafeSubstitute(*prefix_template, [&](std::string_view name) {
    return PrefixField(name, role, rank, local_rank);
  });
}

LinePrefixer::LinePrefixer(std::string prefix, std::size_t max_line_bytes)
    // At least 1: with 0, Feed's cutting loop would take nothing and never end.
    : prefix_(std::move(prefix)), max_line_bytes_(max_line_bytes == 0 ? 1 : max_line_bytes) {}

void LinePrefixer::Feed(std::string_view bytes, std::string& out) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  // memchr, not a loop per byte: every byte a tee'd worker writes passes here (the --tee
  // throughput benchmark measures this path).
  while (p != end) {
    const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    if (hit == nullptr) break;
    const char* const line_end = static_cast<const char*>(hit) + 1;
    AppendLine({p, static_cast<std::size_t>(line_end - p)}, out);
    p = line_end;
  }
  // What is left has no newline: keep it, cutting pieces off once it grows past the limit.
  std::string_view rest(p, static_cast<std::size_t>(end - p));
  while (partial_.size() + rest.size() > max_line_bytes_) {
    const std::size_t take = max_line_bytes_ - partial_.size();
    out += prefix_;
    out += partial_;
    out += rest.substr(0, take);
    out += '\n';
    partial_.clear();
    rest.remove_prefix(take);
  }
  partial_ += rest;
}

void LinePrefixer::Flush(std::string& out) {
  if (partial_.empty()) return;
  out += prefix_;
  out += partial_;
  out += '\n';
  partial_.clear();
}

void LinePrefixer::AppendLine(std::string_view tail, std::string& out) {
  out += prefix_;
  if (!partial_.empty()) {
    out += partial_;
    partial_.clear();
  }
  out += tail;
}

}  // namespace cpplaunch
