#include "base/text.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace cpplaunch {
namespace {

// Python's Template.idpattern is (?a:[_a-z][_a-z0-9]*) under IGNORECASE: ASCII letters of
// either case, never a non-ASCII identifier character.
bool IsIdentStart(char c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

// Length of the identifier starting at s[pos], 0 if none.
size_t IdentLength(std::string_view s, size_t pos) {
  if (pos >= s.size() || !IsIdentStart(s[pos])) return 0;
  size_t end = pos + 1;
  while (end < s.size() && IsIdentChar(s[end])) ++end;
  return end - pos;
}

}  // namespace

std::string_view Strip(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

std::string Join(std::span<const std::string> pieces, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out += separator;
    out += pieces[i];
  }
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::optional<long long> ParsePythonInt(std::string_view text) {
  text = Strip(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || !IsDigit(text.front()) || !IsDigit(text.back())) return std::nullopt;
  // Accumulate unsigned so that the one value whose magnitude exceeds LLONG_MAX (LLONG_MIN)
  // can still be told apart from an overflow.
  unsigned long long value = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    // Python (PEP 515) takes single underscores between digits: "1_000" but not "1__0".
    if (text[i] == '_' && IsDigit(text[i + 1])) continue;  // back() is a digit: i+1 is valid
    if (!IsDigit(text[i])) return std::nullopt;
    if (value > (std::numeric_limits<unsigned long long>::max() - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  constexpr auto kMax = static_cast<unsigned long long>(std::numeric_limits<long long>::max());
  if (negative && value == kMax + 1) return std::numeric_limits<long long>::min();
  if (value > kMax) return std::nullopt;
  const auto signed_value = static_cast<long long>(value);
  return negative ? -signed_value : signed_value;
}

std::optional<double> ParsePythonFloat(std::string_view text) {
  std::string s(Strip(text));
  std::erase(s, '_');
  // strtod would take hexadecimal floats, which Python's float() refuses.
  if (s.empty() || s.find_first_of("xX") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return value;
}

std::optional<int> ToInt(std::optional<long long> value) {
  if (!value || *value < std::numeric_limits<int>::min() ||
      *value > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::string SafeSubstitute(std::string_view text, const TemplateLookup& lookup) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {  // escaped dollar
      out += '$';
      i += 2;
      continue;
    }
    const bool braced = i + 1 < text.size() && text[i + 1] == '{';
    const size_t name_begin = i + (braced ? 2 : 1);
    const size_t length = IdentLength(text, name_begin);
    const size_t name_end = name_begin + length;
    const bool closed = !braced || (name_end < text.size() && text[name_end] == '}');
    if (length == 0 || !closed) {
      // safe_substitute keeps a "$" it cannot use (substitute would raise): the rest of the
      // text, "{" included, is then read as ordinary characters.
      out += '$';
      ++i;
      continue;
    }
    const size_t end = name_end + (braced ? 1 : 0);
    const auto value = lookup(text.substr(name_begin, length));
    if (value) {
      out += *value;
    } else {
      out += text.substr(i, end - i);
    }
    i = end;
  }
  return out;
}

std::string FormatSeconds(std::chrono::steady_clock::duration duration) {
  double seconds = std::max(0.0, std::chrono::duration<double>(duration).count());
  char text[32];
  if (seconds >= 10) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  }
  return text;
}

std::string FormatTenths(std::chrono::steady_clock::duration duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(duration).count());
  return text;
}

std::string HumanBytes(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace cpplaunch
