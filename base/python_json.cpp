#include "base/python_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace cpplaunch {
namespace {

void AppendU(std::string& out, unsigned unit) {
  char text[16];
  std::snprintf(text, sizeof text, "\\u%04x", unit);
  out += text;
}

// Decodes one UTF-8 sequence at text[i] and advances i past it. An invalid or cut sequence is
// one U+FFFD for the lead byte and the continuation bytes that followed it, as Python's
// decode("utf-8", "replace") counts them.
char32_t NextCodePoint(std::string_view text, std::size_t& i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  const int extra = byte >= 0xf5 ? -1 : byte >= 0xf0 ? 3 : byte >= 0xe0 ? 2 : byte >= 0xc2 ? 1 : -1;
  ++i;
  if (extra < 0) return 0xfffd;
  char32_t code = byte & (0x3f >> extra);
  for (int k = 0; k < extra; ++k, ++i) {
    if (i >= text.size() || (static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) return 0xfffd;
    code = (code << 6) | (static_cast<unsigned char>(text[i]) & 0x3f);
  }
  return code;
}

}  // namespace

std::string PyJsonString(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      ++i;
      switch (byte) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          // json.dumps escapes everything outside ' '..'~', DEL included.
          if (byte < 0x20 || byte == 0x7f) {
            AppendU(out, byte);
          } else {
            out += static_cast<char>(byte);
          }
      }
      continue;
    }
    const char32_t code = NextCodePoint(text, i);
    if (code >= 0x10000) {
      const char32_t v = code - 0x10000;
      AppendU(out, 0xd800 + (v >> 10));
      AppendU(out, 0xdc00 + (v & 0x3ff));
    } else {
      AppendU(out, code);
    }
  }
  return out + "\"";
}

std::string PyFloatRepr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char text[64];
  // Python's repr: shortest round-trip digits; positional notation for 1e-4 <= |x| < 1e16,
  // else scientific with at least two exponent digits ("1e-05", "1e+16").
  const double magnitude = std::fabs(value);
  const bool scientific = magnitude != 0 && (magnitude < 1e-4 || magnitude >= 1e16);
  auto result =
      std::to_chars(text, text + sizeof text, value,
                    scientific ? std::chars_format::scientific : std::chars_format::fixed);
  std::string repr(text, result.ptr);
  // to_chars' scientific form is Python's already ("1e-05", "1.5e+16").
  if (!scientific && repr.find('.') == std::string::npos) repr += ".0";
  return repr;
}

PyJsonObject& PyJsonObject::Add(std::string_view key, std::string_view value) {
  Key(key);
  text_ += PyJsonString(value);
  return *this;
}

PyJsonObject& PyJsonObject::Add(std::string_view key, std::int64_t value) {
  Key(key);
  text_ += std::to_string(value);
  return *this;
}

PyJsonObject& PyJsonObject::AddFloat(std::string_view key, double value) {
  Key(key);
  text_ += PyFloatRepr(value);
  return *this;
}

PyJsonObject& PyJsonObject::AddNull(std::string_view key) {
  Key(key);
  text_ += "null";
  return *this;
}

PyJsonObject& PyJsonObject::AddRaw(std::string_view key, std::string_view json) {
  Key(key);
  text_ += json;
  return *this;
}

void PyJsonObject::Key(std::string_view key) {
  if (text_.size() > 1) text_ += ", ";
  text_ += PyJsonString(key);
  text_ += ": ";
}

}  // namespace cpplaunch
