#include "launcher/cli/rdzv_config.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "base/text.h"

namespace cpplaunch {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string InvalidValue(std::string_view key, std::string_view what) {
  return "The rendezvous configuration option '" + std::string(key) +
         "' does not represent a valid " + std::string(what) + " value.";
}

}  // namespace

std::optional<RdzvConfig> RdzvConfig::Parse(std::string_view text, std::string* error) {
  RdzvConfig config;
  text = Strip(text);
  if (text.empty()) return config;  // no pieces at all; otherwise an empty piece is an error
  // torchrun's _parse_rendezvous_config: split(",") keeps empty items (an error below), and
  // split("=", 1) cuts at the first '=' only, so a value may itself hold '='.
  for (std::string_view item : Split(text, ',')) {
    const size_t eq = item.find('=');
    const std::string_view key = Strip(item.substr(0, eq));
    const std::string_view value = eq == std::string_view::npos ? "" : Strip(item.substr(eq + 1));
    if (key.empty()) {
      *error =
          "The rendezvous configuration string must be in format "
          "<key1>=<value1>,...,<keyN>=<valueN>.";
      return std::nullopt;
    }
    if (value.empty()) {
      *error = "The rendezvous configuration option '" + std::string(key) +
               "' must have a value specified.";
      return std::nullopt;
    }
    config.values_[std::string(key)] = std::string(value);
  }
  return config;
}

std::optional<std::string> RdzvConfig::Get(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> RdzvConfig::GetInt(std::string_view key, int64_t fallback,
                                          std::string* error) const {
  auto text = Get(key);
  if (!text) return fallback;
  // A sign and decimal digits: stricter than Python's int(), as this reader always was
  // (digit-group underscores are refused).
  std::optional<int64_t> value;
  if (text->find('_') == std::string::npos) value = ParsePythonInt(*text);
  if (!value) *error = InvalidValue(key, "integer");
  return value;
}

std::optional<bool> RdzvConfig::GetBool(std::string_view key, bool fallback,
                                        std::string* error) const {
  auto text = Get(key);
  if (!text) return fallback;
  static constexpr std::array<std::string_view, 5> kTrue = {"1", "true", "t", "yes", "y"};
  static constexpr std::array<std::string_view, 5> kFalse = {"0", "false", "f", "no", "n"};
  const std::string lower = Lower(*text);
  if (std::find(kTrue.begin(), kTrue.end(), lower) != kTrue.end()) return true;
  if (std::find(kFalse.begin(), kFalse.end(), lower) != kFalse.end()) return false;
  *error = InvalidValue(key, "boolean");
  return std::nullopt;
}

std::optional<std::chrono::seconds> RdzvConfig::GetSeconds(std::string_view key,
                                                           std::chrono::seconds fallback,
                                                           std::string* error) const {
  auto value = GetInt(key, fallback.count(), error);
  if (!value) return std::nullopt;
  if (*value < 0) {
    *error = "The rendezvous configuration option '" + std::string(key) + "' must not be negative.";
    return std::nullopt;
  }
  return std::chrono::seconds(*value);
}

}  // namespace cpplaunch
