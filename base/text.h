#pragma once
// Text helpers shared by every folder: whitespace stripping, splitting on one character,
// joining, and integers read the way Python reads them. Pure; no allocation beyond the
// returned values.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

// Python's str.strip() with no argument for ASCII text: drops " \t\n\r\f\v" at both ends.
// The result views `s`.
std::string_view Strip(std::string_view s);

// Python's str.split(sep): every piece, empty ones included, so "" gives one empty piece and
// "a,,b" gives three. Callers that want no pieces for empty text check for it first.
std::vector<std::string_view> Split(std::string_view text, char sep);

// Python's separator.join(pieces): "" for no pieces, and a separator between every two pieces,
// empty pieces included.
std::string Join(std::span<const std::string> pieces, std::string_view separator);

// '0'..'9'. Takes any char (std::isdigit is undefined for a negative char value).
bool IsDigit(char c);

// Python's int(text) for base 10: surrounding whitespace, an optional sign, decimal digits
// with single underscores between them. nullopt when malformed or outside 64 bits.
std::optional<long long> ParsePythonInt(std::string_view text);

// Python's float(text) without hexadecimal forms ("inf" and "nan" are accepted as Python does).
std::optional<double> ParsePythonFloat(std::string_view text);

// Python's string.Template(text).safe_substitute(...): "$$" is "$"; "$name" and "${name}" are
// replaced by lookup(name) when it has a value and kept verbatim when not; a "$" before no
// identifier, or a "${" without its "}", is kept too. Identifiers are ASCII
// [_A-Za-z][_A-Za-z0-9]*, the longest match ("$ab" names "ab", never "a").
using TemplateLookup = std::function<std::optional<std::string>(std::string_view name)>;
std::string SafeSubstitute(std::string_view text, const TemplateLookup& lookup);

// `value` when it fits in an int, else nullopt (so a parse and a range check compose).
std::optional<int> ToInt(std::optional<long long> value);

// "12 s" / "1.5 s": a duration for progress lines (whole seconds from 10 s on; never negative).
std::string FormatSeconds(std::chrono::steady_clock::duration duration);
// "1.0 s" / "12.3 s": a bound or wait in an error message, always to a tenth of a second.
std::string FormatTenths(std::chrono::steady_clock::duration duration);

// A byte count in binary units for people: "512 B", "1.5 KiB", "64.0 MiB", "1.5 GiB".
std::string HumanBytes(std::uint64_t bytes);

}  // namespace cpplaunch
