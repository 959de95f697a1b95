#pragma once
// The "one key=value per line" text record that rendezvous values travel in through the store
// (NodeInfo, RoundEnd, RendezvousState). Pure.
//
// A record is a sequence of "key=value\n" lines. Keys are chosen by the code (no '=' or '\n');
// values are free text on one line: a newline in a value is written as a space, so a value never
// spills into the next line. Parsing splits each line at its first '=', so values may contain '='.
// A key given twice keeps its last value; keys nobody asks for are ignored, which lets a newer
// agent add fields an older one skips.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// Writes a record line by line, in call order.
class TextRecordBuilder {
 public:
  // Appends "key=value\n" with every '\n' of `value` replaced by ' '.
  TextRecordBuilder& Add(std::string_view key, std::string_view value);
  // Appends the decimal form of `value` (as std::to_string writes it).
  TextRecordBuilder& AddInt(std::string_view key, int64_t value);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// The fields of a parsed record. `what` names the record in every error ("store value",
// "rendezvous state"), so a caller can pass the message on as it is.
class TextRecord {
 public:
  // Nullopt and *error = "<what> line without '=': <the line's first 40 characters>" when a
  // non-empty part of `text` between newlines has no '='. The text need not end with '\n'.
  static std::optional<TextRecord> Parse(std::string_view text, std::string_view what,
                                         std::string* error);

  // The value of `key`, or "" when the record has no such field.
  std::string Text(std::string_view key) const;

  // Stores the value of `key` in *out and returns true when it is a whole decimal integer that
  // fits the type (optional '-', digits, nothing else). Otherwise returns false, leaves *out
  // alone and sets *error to "<what> is missing '<key>'" or
  // "<what> field '<key>' is not an integer".
  bool GetInt64(std::string_view key, int64_t* out, std::string* error) const;
  bool GetInt(std::string_view key, int* out, std::string* error) const;
  // The same, and the value must lie in [min, max]; otherwise *error is
  // "<what> field '<key>' is <value>, outside <min>..<max>".
  bool GetInt64In(std::string_view key, int64_t min, int64_t max, int64_t* out,
                  std::string* error) const;
  bool GetIntIn(std::string_view key, int64_t min, int64_t max, int* out, std::string* error) const;
  // Stores the value of `key` ("" when absent) in *out when it has at most `max_bytes` bytes;
  // otherwise returns false with "<what> field '<key>' is <n> bytes long, more than <max>".
  bool GetText(std::string_view key, std::size_t max_bytes, std::string* out,
               std::string* error) const;

 private:
  template <typename Int>
  bool GetInteger(std::string_view key, Int* out, std::string* error) const;

  std::string what_;
  std::map<std::string, std::string, std::less<>> fields_;
};

}  // namespace cpplaunch
