#include "launcher/log/log_level.h"

#include <array>
#include <cctype>
#include <utility>

namespace cpplaunch {
namespace {

constexpr std::array<std::pair<std::string_view, LogLevel>, 7> kNames{{
    {"DEBUG", LogLevel::kDebug},
    {"INFO", LogLevel::kInfo},
    {"WARNING", LogLevel::kWarning},
    {"WARN", LogLevel::kWarning},
    {"ERROR", LogLevel::kError},
    {"CRITICAL", LogLevel::kCritical},
    {"FATAL", LogLevel::kCritical},
}};

constexpr size_t kShownChars = 40;

std::string Upper(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

}  // namespace

LogLevelSetting ReadLogLevel(std::optional<std::string_view> value) {
  if (!value || value->empty()) return {};
  const std::string name = Upper(*value);
  for (const auto& [known, level] : kNames) {
    if (name == known) return {level, ""};
  }
  // An environment variable may be long, and may hold a newline: say at most its start.
  std::string shown(value->substr(0, kShownChars));
  for (char& c : shown) {
    if (std::iscntrl(static_cast<unsigned char>(c)) != 0) c = '?';
  }
  if (value->size() > kShownChars) shown += "...";
  return {LogLevel::kWarning,
          "LOGLEVEL=" + shown +
              " is not a log level (DEBUG, INFO, WARNING, ERROR or CRITICAL); using WARNING"};
}

}  // namespace cpplaunch
