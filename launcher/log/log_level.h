#pragma once
// LOGLEVEL, read as torchrun reads it: torchelastic's loggers call Python's setLevel with the
// variable's value, default WARNING. The names are Python's (WARN and FATAL are its aliases);
// cpplaunch also takes them in lower case, where Python's setLevel raises at import, and says
// so in one line for a value it does not know instead of failing the job. Pure.

#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// Python's levels, least severe first.
enum class LogLevel { kDebug, kInfo, kWarning, kError, kCritical };

struct LogLevelSetting {
  LogLevel level = LogLevel::kWarning;
  std::string warning;  // "" unless the value was not a level: the line to say about it
};

// `value` is LOGLEVEL's value, nullopt when unset. An empty value is unset, as in Python's
// `os.environ.get("LOGLEVEL") or ...`.
LogLevelSetting ReadLogLevel(std::optional<std::string_view> value);

}  // namespace cpplaunch
