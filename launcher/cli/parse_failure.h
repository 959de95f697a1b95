#pragma once
// How the command-line reader's parts report the first error of a parse: they throw a
// ParseFailure, and ParseOptions turns it into its ParseResult. Internal to launcher/cli.

#include <string>
#include <string_view>
#include <utility>

#include "launcher/cli/options.h"

namespace cpplaunch {

struct ParseFailure {
  ParseStatus status;
  std::string message;
};

// argparse's errors: "cpplaunch: error: <message>" and exit 2.
[[noreturn]] inline void UsageError(std::string message) {
  throw ParseFailure{ParseStatus::kUsageError, std::move(message)};
}

// What the job's engine contradicts or cannot run: one line without argparse's hint, exit 2.
[[noreturn]] inline void Refuse(std::string message) {
  throw ParseFailure{ParseStatus::kRefused, std::move(message)};
}

// Values torchrun rejects after parsing: exit 1.
[[noreturn]] inline void ValueError(std::string message) {
  throw ParseFailure{ParseStatus::kValueError, std::move(message)};
}

// How argparse's messages show a value or a word: in single quotes, as given (no escaping).
inline std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace cpplaunch
