#include "worker_env/arg_template.h"

namespace cpplaunch {
namespace {

// Python's Template.idpattern is (?a:[_a-z][_a-z0-9]*) under IGNORECASE: ASCII letters of
// either case, never a non-ASCII identifier character.
bool IsIdentStart(char c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

// Length of the identifier starting at s[pos], 0 if none.
size_t IdentLength(std::string_view s, size_t pos) {
  if (pos >= s.size() || !IsIdentStart(s[pos])) return 0;
  size_t end = pos + 1;
  while (end < s.size() && IsIdentChar(s[end])) ++end;
  return end - pos;
}

}  // namespace

std::string SubstituteLocalRank(std::string_view arg, int local_rank) {
  constexpr std::string_view kName = "local_rank";
  const std::string value = std::to_string(local_rank);
  std::string out;
  out.reserve(arg.size());
  size_t i = 0;
  while (i < arg.size()) {
    if (arg[i] != '$') {
      out += arg[i++];
      continue;
    }
    if (i + 1 < arg.size() && arg[i + 1] == '$') {  // escaped dollar
      out += '$';
      i += 2;
      continue;
    }
    if (i + 1 < arg.size() && arg[i + 1] == '{') {  // braced: ${ident}
      size_t len = IdentLength(arg, i + 2);
      size_t close = i + 2 + len;
      if (len > 0 && close < arg.size() && arg[close] == '}') {
        std::string_view ident = arg.substr(i + 2, len);
        out += ident == kName ? value : std::string(arg.substr(i, close + 1 - i));
        i = close + 1;
        continue;
      }
      out += '$';  // malformed "${": kept verbatim, as safe_substitute does
      ++i;
      continue;
    }
    // Python's pattern matches the longest identifier, so "$local_rankX" is left alone.
    size_t len = IdentLength(arg, i + 1);
    if (len > 0) {
      std::string_view ident = arg.substr(i + 1, len);
      out += ident == kName ? value : std::string(arg.substr(i, len + 1));
      i += len + 1;
      continue;
    }
    out += '$';  // a "$" before no identifier: safe_substitute keeps it, unlike substitute
    ++i;
  }
  return out;
}

}  // namespace cpplaunch
