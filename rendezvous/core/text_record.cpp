#include "rendezvous/core/text_record.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace cpplaunch {

TextRecordBuilder& TextRecordBuilder::Add(std::string_view key, std::string_view value) {
  text_ += key;
  text_ += '=';
  const size_t start = text_.size();
  text_ += value;
  std::replace(text_.begin() + static_cast<std::ptrdiff_t>(start), text_.end(), '\n', ' ');
  text_ += '\n';
  return *this;
}

TextRecordBuilder& TextRecordBuilder::AddInt(std::string_view key, int64_t value) {
  return Add(key, std::to_string(value));
}

std::optional<TextRecord> TextRecord::Parse(std::string_view text, std::string_view what,
                                            std::string* error) {
  TextRecord record;
  record.what_ = std::string(what);
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      *error = record.what_ + " line without '=': " + std::string(line.substr(0, 40));
      return std::nullopt;
    }
    record.fields_[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
  }
  return record;
}

std::string TextRecord::Text(std::string_view key) const {
  auto it = fields_.find(key);
  return it == fields_.end() ? std::string() : it->second;
}

template <typename Int>
bool TextRecord::GetInteger(std::string_view key, Int* out, std::string* error) const {
  auto it = fields_.find(key);
  if (it == fields_.end()) {
    *error = what_ + " is missing '" + std::string(key) + "'";
    return false;
  }
  // from_chars, not base/text's ParsePythonInt: AddInt writes std::to_string's form, so an
  // optional '-' and digits is the only valid spelling; a '+', spaces or '_' mean the record
  // was not written by an agent, and it is refused rather than guessed at.
  const std::string& text = it->second;
  Int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    *error = what_ + " field '" + std::string(key) + "' is not an integer";
    return false;
  }
  *out = value;
  return true;
}

bool TextRecord::GetInt64(std::string_view key, int64_t* out, std::string* error) const {
  return GetInteger(key, out, error);
}

bool TextRecord::GetInt(std::string_view key, int* out, std::string* error) const {
  return GetInteger(key, out, error);
}

bool TextRecord::GetInt64In(std::string_view key, int64_t min, int64_t max, int64_t* out,
                            std::string* error) const {
  int64_t value = 0;
  if (!GetInteger(key, &value, error)) return false;
  if (value < min || value > max) {
    *error = what_ + " field '" + std::string(key) + "' is " + std::to_string(value) +
             ", outside " + std::to_string(min) + ".." + std::to_string(max);
    return false;
  }
  *out = value;
  return true;
}

bool TextRecord::GetIntIn(std::string_view key, int64_t min, int64_t max, int* out,
                          std::string* error) const {
  // The bounds are clamped to int's, so no value that passes can be narrowed.
  int64_t value = 0;
  if (!GetInt64In(key, std::max<int64_t>(min, INT32_MIN), std::min<int64_t>(max, INT32_MAX), &value,
                  error)) {
    return false;
  }
  *out = static_cast<int>(value);
  return true;
}

bool TextRecord::GetText(std::string_view key, std::size_t max_bytes, std::string* out,
                         std::string* error) const {
  std::string value = Text(key);
  if (value.size() > max_bytes) {
    *error = what_ + " field '" + std::string(key) + "' is " + std::to_string(value.size()) +
             " bytes long, more than " + std::to_string(max_bytes);
    return false;
  }
  *out = std::move(value);
  return true;
}

}  // namespace cpplaunch
