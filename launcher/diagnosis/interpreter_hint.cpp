#include "launcher/diagnosis/interpreter_hint.h"

#include <algorithm>
#include <string_view>

namespace cpplaunch {
namespace {

// Every worker ended within the start-up window: those that failed by themselves alike (same
// exit code, not a signal), the others stopped by the teardown the first failure began.
bool FailedAlikeAtStartUp(const std::vector<FailureRecord>& records, std::size_t workers,
                          std::chrono::system_clock::time_point started) {
  if (records.size() != workers) return false;
  const FailureRecord* first = nullptr;
  for (const FailureRecord& r : records) {
    if (r.time - started > kStartupWindow) return false;
    if (r.killed_by_teardown) continue;
    if (r.exit.signaled() || (first != nullptr && !(r.exit == first->exit))) return false;
    if (first == nullptr) first = &r;
  }
  return first != nullptr;
}

std::string Where(const Interpreter& interpreter) {
  const std::string path = interpreter.resolved.empty()
                               ? interpreter.program + " (not found on PATH)"
                               : interpreter.resolved;
  if (interpreter.from_python_exec) return path + " (PYTHON_EXEC)";
  if (!interpreter.origin.empty()) {
    return path + " (" + interpreter.origin + "; set PYTHON_EXEC to choose one)";
  }
  return path + " (" + interpreter.program + " on PATH; set PYTHON_EXEC to choose one)";
}

// Python's line for `python -m missing`: "<interpreter path>: No module named <name>".
bool IsRunModuleError(const std::string& line) {
  constexpr std::string_view kNoModule = ": No module named ";
  const auto at = line.find(kNoModule);
  return at != std::string::npos && at > 0 && line.find(' ') > at;
}

}  // namespace

bool NamesModule(const std::string& line, const std::string& module) {
  if (module.empty()) return false;
  const auto quoted = "'" + module;
  for (auto at = line.find(quoted); at != std::string::npos; at = line.find(quoted, at + 1)) {
    const char next = at + quoted.size() < line.size() ? line[at + quoted.size()] : '\0';
    if (next == '\'' || next == '.') return true;
  }
  const std::string bare = "No module named " + module;
  return line.ends_with(bare) || line.find(bare + ".") != std::string::npos;
}

std::string ImportErrorLine(const std::string& text) {
  std::string found;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    if (line.starts_with("ModuleNotFoundError: ") || line.starts_with("ImportError: ") ||
        IsRunModuleError(line)) {
      found = line;
    }
    begin = end + 1;
  }
  return found;
}

std::optional<std::string> InterpreterHint(const std::vector<FailureRecord>& records,
                                           std::size_t local_world_size,
                                           std::chrono::system_clock::time_point started,
                                           const std::vector<std::string>& texts,
                                           const Interpreter& interpreter,
                                           const std::vector<std::string>& job_modules) {
  if (texts.size() != records.size()) return std::nullopt;
  if (!FailedAlikeAtStartUp(records, local_world_size, started)) return std::nullopt;
  // Only the workers that failed by themselves speak: a stopped one may not have got that far.
  std::vector<std::string> own;
  int code = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].killed_by_teardown) continue;
    own.push_back(texts[i]);
    code = records[i].exit.code();
  }
  // The shell's codes for a program that could not be executed (posix_sys.cpp's spawn too).
  if (code == 126 || code == 127) {
    return "the workers could not start (exit code " + std::to_string(code) +
           "); the interpreter was " + Where(interpreter);
  }
  const std::string error = ImportErrorLine(own.front());
  const bool of_the_job = std::any_of(job_modules.begin(), job_modules.end(),
                                      [&](const auto& m) { return NamesModule(error, m); });
  if (error.empty() || !of_the_job) return std::nullopt;
  for (const std::string& text : own) {
    if (ImportErrorLine(text) != error) return std::nullopt;
  }
  return "the workers failed at start-up with " + error + "; the interpreter was " +
         Where(interpreter);
}

}  // namespace cpplaunch
