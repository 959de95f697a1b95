#pragma once
// JSON text exactly as Python's json.dumps writes it with its defaults: ", " and ": "
// separators, ensure_ascii (every non-ASCII character as \uXXXX, surrogate pairs above the
// BMP), keys in insertion order, floats as repr() writes them ("3.0", "0.1", "1e-05").
// For records whose consumers compare text with what torch writes. Pure.

#include <cstdint>
#include <string>
#include <string_view>

namespace cpplaunch {

// "\"...\"" with Python's escapes; invalid UTF-8 bytes become U+FFFD.
std::string PyJsonString(std::string_view text);
// Python's repr(float) for a finite value: the shortest text that reads back the same, with
// ".0" for integral values; "NaN", "Infinity", "-Infinity" as json.dumps writes them.
std::string PyFloatRepr(double value);

// Builds one object, member by member, in order.
class PyJsonObject {
 public:
  PyJsonObject& Add(std::string_view key, std::string_view value);
  PyJsonObject& Add(std::string_view key, const char* value) {
    return Add(key, std::string_view(value));
  }
  PyJsonObject& Add(std::string_view key, std::int64_t value);
  PyJsonObject& Add(std::string_view key, int value) {
    return Add(key, static_cast<std::int64_t>(value));
  }
  PyJsonObject& AddFloat(std::string_view key, double value);
  PyJsonObject& AddNull(std::string_view key);
  // `json` is already JSON text (a nested object).
  PyJsonObject& AddRaw(std::string_view key, std::string_view json);
  std::string str() const { return text_ + "}"; }

 private:
  void Key(std::string_view key);
  std::string text_ = "{";
};

}  // namespace cpplaunch
