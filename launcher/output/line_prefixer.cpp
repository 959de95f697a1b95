#include "launcher/output/line_prefixer.h"

#include <cstring>
#include <utility>

namespace cpplaunch {
namespace {

bool IsIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool IsIdentifierChar(char c) { return IsIdentifierStart(c) || (c >= '0' && c <= '9'); }

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
  // torchrun's header when TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE is unset: "[default0]:".
  if (!prefix_template) return "[" + std::string(role) + std::to_string(local_rank) + "]:";
  // Python's string.Template.safe_substitute: unknown or malformed placeholders stay verbatim.
  const std::string_view t = *prefix_template;
  std::string out;
  std::size_t i = 0;
  while (i < t.size()) {
    if (t[i] != '$') {
      out += t[i++];
      continue;
    }
    if (i + 1 < t.size() && t[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    const bool braced = i + 1 < t.size() && t[i + 1] == '{';
    const std::size_t name_begin = i + (braced ? 2 : 1);
    std::size_t name_end = name_begin;
    if (name_end < t.size() && IsIdentifierStart(t[name_end])) {
      while (name_end < t.size() && IsIdentifierChar(t[name_end])) ++name_end;
    }
    const bool closed = !braced || (name_end < t.size() && t[name_end] == '}');
    if (name_end == name_begin || !closed) {
      out += t[i++];
      continue;
    }
    const std::size_t end = name_end + (braced ? 1 : 0);
    const auto value =
        PrefixField(t.substr(name_begin, name_end - name_begin), role, rank, local_rank);
    out += value ? std::string_view(*value) : t.substr(i, end - i);
    i = end;
  }
  return out;
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
