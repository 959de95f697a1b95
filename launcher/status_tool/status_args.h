#pragma once
// cpplaunch-status's command line:
//   cpplaunch-status HOST:PORT [HOST:PORT ...] [--json] [--watch[=SECONDS]]
//                    [--secret-file PATH] [--silent-after SECONDS] [--timeout SECONDS]
//   cpplaunch-status --help | --version
// Values are given as "--opt value" or "--opt=value", except --watch's, which is optional and
// so only "--watch=SECONDS" (as argparse reads an optional value). Pure; nothing here throws,
// and nothing is read: the secret file is the caller's to open.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch::status {

inline constexpr double kDefaultWatchSeconds = 2;
inline constexpr double kDefaultSilentAfterSeconds = 60;
inline constexpr double kDefaultTimeoutSeconds = 2;

struct StatusArgs {
  std::vector<std::string> addresses;  // each a valid HOST:PORT (status_address.h)
  bool json = false;
  std::optional<double> watch_seconds;  // --watch: the refresh period
  std::string secret_file;              // "" without --secret-file
  double silent_after_seconds = kDefaultSilentAfterSeconds;
  double timeout_seconds = kDefaultTimeoutSeconds;
  bool help = false;     // --help: print StatusUsage(), nothing else is checked
  bool version = false;  // --version
};

struct ParsedStatusArgs {
  std::optional<StatusArgs> args;  // nullopt with `error`
  std::string error;               // one line: what is wrong with the command line
};

// `words`: argv without the program's name.
ParsedStatusArgs ParseStatusArgs(std::span<const std::string_view> words);

// The --help text.
std::string StatusUsage();

}  // namespace cpplaunch::status
