#include "launcher/hang/python_stack.h"

#include <filesystem>
#include <optional>

#include "base/text.h"

namespace cpplaunch {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool IsThreadHeader(std::string_view line) {
  return (StartsWith(line, "Thread 0x") || StartsWith(line, "Current thread 0x") ||
          StartsWith(line, "Stack (most recent call first)")) &&
         line.back() == ':';
}

// '  File "x.py", line 42 in f'
std::optional<PythonFrame> ParseFrame(std::string_view line) {
  line = Strip(line);
  if (!StartsWith(line, "File \"")) return std::nullopt;
  const std::size_t close = line.find("\", line ", 6);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(close + 8);
  const std::size_t in = rest.find(" in ");
  if (in == std::string_view::npos) return std::nullopt;
  auto number = ToInt(ParsePythonInt(rest.substr(0, in)));
  if (!number) return std::nullopt;
  return PythonFrame{std::string(line.substr(6, close - 6)), *number,
                     std::string(rest.substr(in + 4))};
}

bool IsLibraryFile(std::string_view file) {
  for (std::string_view marker :
       {"/site-packages/", "/dist-packages/", "/lib/python3", "<frozen ", "<string>"}) {
    if (file.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

std::vector<PythonThread> ParseFaulthandlerDump(std::string_view text) {
  std::vector<PythonThread> threads;
  bool in_dump = false;
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (StartsWith(line, "Fatal Python error: ")) {
      threads.clear();  // the last dump wins
      in_dump = true;
    } else if (IsThreadHeader(line)) {
      if (!in_dump) threads.clear();
      in_dump = true;
      threads.push_back(PythonThread{std::string(line), {}});
    } else if (Strip(line) == "<no Python frame>" && !threads.empty()) {
      threads.back().no_python_frame = true;
    } else if (auto frame = ParseFrame(line); frame && !threads.empty()) {
      threads.back().frames.push_back(std::move(*frame));
    }
  }
  return threads;
}

const PythonThread& MainThread(const std::vector<PythonThread>& threads) {
  for (const PythonThread& thread : threads) {
    if (!thread.frames.empty() && thread.frames.back().function == "<module>") return thread;
  }
  for (const PythonThread& thread : threads) {
    if (StartsWith(thread.header, "Current thread")) return thread;
  }
  return threads.front();
}

std::string WhereStuck(const PythonThread& thread) {
  if (thread.frames.empty()) return thread.no_python_frame ? std::string(kAfterLastLine) : "";
  const PythonFrame* user = &thread.frames.front();
  for (const PythonFrame& frame : thread.frames) {
    if (!IsLibraryFile(frame.file)) {
      user = &frame;
      break;
    }
  }
  return thread.frames.front().function + " at " +
         std::filesystem::path(user->file).filename().string() + ":" + std::to_string(user->line);
}

std::string FormatFrames(const PythonThread& thread, std::string_view indent) {
  if (thread.frames.empty() && thread.no_python_frame) {
    return std::string(indent) + "<no Python frame>\n";
  }
  std::string text;
  for (const PythonFrame& frame : thread.frames) {
    text += std::string(indent) + "File \"" + frame.file + "\", line " +
            std::to_string(frame.line) + " in " + frame.function + "\n";
  }
  return text;
}

}  // namespace cpplaunch
