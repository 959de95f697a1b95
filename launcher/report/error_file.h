#pragma once
// torchelastic error files (JSON), as written by a worker decorated with @record (path in its
// TORCHELASTIC_ERROR_FILE) and by the agent for its own parent (scheduler, nested launcher).
// Two shapes are read:
//   {"message": {"message": "<Type>: <text>", "extraInfo": {"py_callstack": "...", "timestamp":
//   "<unix s>"}}}
//   {"message": "<text>", "timestamp": <unix s>}

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// What a worker's error file says. Every field may be empty: a file that exists but holds
// garbage still counts as "written" (its path is shown in the report).
// (NOLINT: the implicit noexcept move reaches into nlohmann::json, where the check finds throws
// that its move never reaches.)
struct WorkerError {      // NOLINT(bugprone-exception-escape)
  nlohmann::json data;    // the whole document when it parsed as a JSON object, else null
  std::string message;    // shape 1: message.message; shape 2: message
  std::string traceback;  // shape 1: message.extraInfo.py_callstack
  std::optional<std::chrono::system_clock::time_point> timestamp;  // whole seconds
};

// Pure. Never throws: missing keys, wrong types and invalid JSON leave fields empty.
WorkerError ParseWorkerError(std::string_view text);

// Reads and parses `path`. nullopt when the path is empty or names no regular file (the worker
// wrote nothing). Never throws.
std::optional<WorkerError> ReadWorkerError(const std::filesystem::path& path);

// Replaces `path` with `document` (written to a temporary file beside it, then renamed, so a
// reader never sees half a file). Throws std::system_error on I/O errors.
void WriteErrorFile(const std::filesystem::path& path, const nlohmann::json& document);

}  // namespace cpplaunch
