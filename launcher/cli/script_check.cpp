#include "launcher/cli/script_check.h"

#include <fstream>

namespace cpplaunch {

std::optional<std::string> ScriptProblem(const LaunchOptions& options) {
  // With --no-python the script is meant to be a program; with -m it names a module, not a file.
  if (options.no_python || options.module) return std::nullopt;
  std::ifstream script(options.training_script, std::ios::binary);
  char magic[4] = {};
  // A missing or short file is left to Python, whose own message names it.
  if (!script.read(magic, sizeof(magic))) return std::nullopt;
  if (std::string(magic, sizeof(magic)) !=
      "\x7f"
      "ELF")
    return std::nullopt;
  return options.training_script +
         " is a compiled program, not a Python script: add --no-python to run it directly";
}

}  // namespace cpplaunch
