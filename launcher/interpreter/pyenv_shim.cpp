#include "launcher/interpreter/pyenv_shim.h"

#include "base/text.h"

namespace cpplaunch {

std::optional<std::string> PyenvShimRoot(std::string_view script) {
  constexpr std::string_view kExport = "export PYENV_ROOT=";
  if (script.find("/libexec/pyenv\" exec ") == std::string_view::npos) return std::nullopt;
  for (std::string_view line : Split(script, '\n')) {
    line = Strip(line);
    if (!line.starts_with(kExport)) continue;
    std::string_view value = line.substr(kExport.size());
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (!value.empty()) return std::string(value);
  }
  return std::nullopt;
}

std::vector<std::string> PyenvVersionNames(std::string_view text) {
  std::vector<std::string> names;
  for (std::string_view line : Split(text, '\n')) {
    line = line.substr(0, line.find('#'));
    std::string word;
    for (char c : line) {
      if (c == ' ' || c == '\t' || c == ':' || c == '\r') {
        if (!word.empty()) names.push_back(std::move(word));
        word.clear();
      } else {
        word += c;
      }
    }
    if (!word.empty()) names.push_back(std::move(word));
  }
  return names;
}

}  // namespace cpplaunch
