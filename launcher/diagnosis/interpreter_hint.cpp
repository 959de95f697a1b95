#include "launcher/diagnosis/interpreter_hint.h"

#include <algorithm>

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
  return path + " (" + interpreter.program + " on PATH; set PYTHON_EXEC to choose one)";
}

}  // namespace

std::string ImportErrorLine(const std::string& text) {
  std::string found;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    if (line.rfind("ModuleNotFoundError: ", 0) == 0 || line.rfind("ImportError: ", 0) == 0) {
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
                                           const Interpreter& interpreter) {
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
  const bool no_text = std::all_of(own.begin(), own.end(), [](const auto& t) { return t.empty(); });
  if (no_text) {
    if (code != 1) return std::nullopt;
    return "the workers failed at start-up (exit code 1); the interpreter was " +
           Where(interpreter);
  }
  const std::string error = ImportErrorLine(own.front());
  if (error.empty()) return std::nullopt;
  for (const std::string& text : own) {
    if (ImportErrorLine(text) != error) return std::nullopt;
  }
  return "the workers failed at start-up with " + error + "; the interpreter was " +
         Where(interpreter);
}

}  // namespace cpplaunch
