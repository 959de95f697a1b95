#include "launcher/status_tool/status_args.h"

#include <cmath>

#include "base/text.h"
#include "launcher/status_tool/status_address.h"

namespace cpplaunch::status {
namespace {

// A positive, finite number of seconds, or nullopt.
std::optional<double> Seconds(std::string_view text) {
  std::optional<double> value = ParsePythonFloat(text);
  if (!value || !std::isfinite(*value) || *value <= 0) return std::nullopt;
  return value;
}

struct Flag {
  std::string_view name;
  std::optional<std::string_view> value;  // given with '='
};

Flag SplitFlag(std::string_view word) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos) return {word, std::nullopt};
  return {word.substr(0, eq), word.substr(eq + 1)};
}

// Applies one flag that takes a value; returns "" or what is wrong.
std::string ApplyValue(std::string_view name, std::string_view value, StatusArgs* args) {
  if (name == "--secret-file") {
    if (value.empty()) return "--secret-file: give the path of the job's secret file";
    args->secret_file = std::string(value);
    return "";
  }
  std::optional<double> seconds = Seconds(value);
  if (!seconds) {
    return std::string(name) + ": '" + std::string(value) + "' is not a positive number of seconds";
  }
  if (name == "--watch") {
    args->watch_seconds = seconds;
  } else if (name == "--silent-after") {
    args->silent_after_seconds = *seconds;
  } else {
    args->timeout_seconds = *seconds;
  }
  return "";
}

bool TakesValue(std::string_view name) {
  return name == "--secret-file" || name == "--silent-after" || name == "--timeout";
}

// Reads words[*i] (and, for "--opt value", the next one); returns "" or what is wrong.
std::string ApplyWord(std::span<const std::string_view> words, size_t* i, StatusArgs* args) {
  std::string_view word = words[*i];
  Flag flag = SplitFlag(word);
  if (flag.name == "--json" && !flag.value) {
    args->json = true;
  } else if (flag.name == "--watch") {
    if (!flag.value) {
      args->watch_seconds = kDefaultWatchSeconds;
      return "";
    }
    return ApplyValue(flag.name, *flag.value, args);
  } else if (TakesValue(flag.name)) {
    if (flag.value) return ApplyValue(flag.name, *flag.value, args);
    if (*i + 1 >= words.size()) return std::string(flag.name) + " needs a value";
    return ApplyValue(flag.name, words[++*i], args);
  } else if (!word.empty() && word.front() == '-') {
    return "unknown option " + std::string(word) + " (see --help)";
  } else if (!ParseStatusAddress(word)) {
    // "--watch 5": the value of an optional flag goes after '=', as argparse reads it.
    std::string hint = Seconds(word) ? " (--watch takes its value as --watch=SECONDS)" : "";
    return "'" + std::string(word) + "' is not an agent's status address HOST:PORT" + hint;
  } else {
    args->addresses.emplace_back(word);
  }
  return "";
}

}  // namespace

ParsedStatusArgs ParseStatusArgs(std::span<const std::string_view> words) {
  StatusArgs args;
  for (std::string_view word : words) {
    if (word == "--help" || word == "-h") {
      args.help = true;
      return {args, ""};
    }
    if (word == "--version") {
      args.version = true;
      return {args, ""};
    }
  }
  for (size_t i = 0; i < words.size(); ++i) {
    if (std::string error = ApplyWord(words, &i, &args); !error.empty()) {
      return {std::nullopt, error};
    }
  }
  if (args.addresses.empty()) {
    return {std::nullopt, "give at least one agent's status address HOST:PORT (see --help)"};
  }
  return {std::move(args), ""};
}

std::string StatusUsage() {
  return R"(usage: cpplaunch-status HOST:PORT [HOST:PORT ...] [--json] [--watch[=SECONDS]]
                        [--secret-file PATH] [--silent-after SECONDS] [--timeout SECONDS]

Shows every host and rank of a running cpplaunch job: asks the agents' status endpoints
(cpplaunch --status-port PORT) given, then every other host they name, and prints one table.

positional arguments:
  HOST:PORT             an agent's status address ([ADDR]:PORT for IPv6)

options:
  --json                print one JSON document (every host's /status answer) instead
  --watch[=SECONDS]     refresh every SECONDS (default 2) until interrupted
  --secret-file PATH    the job's secret file (--rdzv-conf secret_file=): agents of a job with
                        a secret show other hosts' addresses only to requests that prove it
  --silent-after SECONDS
                        mark running ranks without output for longer (default 60)
  --timeout SECONDS     how long each agent has to answer (default 2)
  --version             print the version and exit
  -h, --help            show this help and exit

exit status: 0 when at least one agent answered (or --watch ended by a signal), 1 when none
could be reached, 2 for bad usage.
)";
}

}  // namespace cpplaunch::status
