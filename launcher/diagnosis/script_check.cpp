#include "launcher/diagnosis/script_check.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/executable_search.h"
#include "base/text.h"

namespace cpplaunch {
namespace {

std::optional<std::string> ProgramProblem(const std::string& program, const char* path_value) {
  ExecutableSearch search = FindExecutable(program, path_value);
  if (search.found) return std::nullopt;
  if (!search.not_executable.empty()) {
    return "cannot run " + program + ": " + Join(search.not_executable, ", ") +
           " is not executable (chmod +x it, or drop --no-python to run it with python)";
  }
  if (program.find('/') != std::string::npos) {
    return "cannot run " + program +
           ": No such file (with --no-python the script is run as a program: check the path)";
  }
  return "cannot run " + program + ": no such program on PATH (with --no-python the script is " +
         "run as a program: give its path, or check PATH)";
}

bool IsElf(const std::string& path) {
  std::ifstream script(path, std::ios::binary);
  char magic[4] = {};
  // A short or unreadable file is left to Python, whose own message names it.
  if (!script.read(magic, sizeof(magic))) return false;
  return std::string(magic, sizeof(magic)) ==
         "\x7f"
         "ELF";
}

}  // namespace

std::optional<std::string> ScriptProblem(const LaunchOptions& options, const char* path_value) {
  // With -m the script names a module, which only the workers' python can look up.
  if (options.module) return std::nullopt;
  const std::string& script = options.training_script;
  if (options.no_python) return ProgramProblem(script, path_value);
  std::error_code error;
  if (!std::filesystem::exists(script, error) && !error) {
    return "the training script " + script + " does not exist (in " +
           std::filesystem::current_path(error).string() + "); check the path";
  }
  if (!IsElf(script)) return std::nullopt;
  return script + " is a compiled program, not a Python script: add --no-python to run it directly";
}

}  // namespace cpplaunch
