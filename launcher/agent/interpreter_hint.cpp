#include "launcher/agent/interpreter_hint.h"

#include <algorithm>

namespace cpplaunch {
namespace {

bool AllFailedAlikeAtStartUp(const std::vector<FailureRecord>& records, std::size_t workers,
                             std::chrono::system_clock::time_point started) {
  if (records.empty() || records.size() != workers) return false;
  const WorkerExit& first = records.front().exit;
  return std::all_of(records.begin(), records.end(), [&](const FailureRecord& r) {
    return !r.killed_by_teardown && !r.exit.signaled() && r.exit == first &&
           r.time - started <= kStartupWindow;
  });
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
  if (!AllFailedAlikeAtStartUp(records, local_world_size, started)) return std::nullopt;
  const bool no_text =
      std::all_of(texts.begin(), texts.end(), [](const std::string& text) { return text.empty(); });
  if (no_text) {
    if (records.front().exit.code() != 1) return std::nullopt;
    return "every worker failed at start-up (exit code 1); the interpreter was " +
           Where(interpreter);
  }
  const std::string error = texts.empty() ? "" : ImportErrorLine(texts.front());
  if (error.empty()) return std::nullopt;
  for (const std::string& text : texts) {
    if (ImportErrorLine(text) != error) return std::nullopt;
  }
  return "every worker failed at start-up with " + error + "; the interpreter was " +
         Where(interpreter);
}

}  // namespace cpplaunch
