#include "launcher/interpreter/shebang.h"

#include <vector>

#include "base/text.h"

namespace cpplaunch {
namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::string_view word : Split(line, ' ')) {
    word = Strip(word);
    if (!word.empty()) words.push_back(word);
  }
  return words;
}

bool IsPython(std::string_view program) {
  const std::string_view name = program.substr(program.rfind('/') + 1);
  return name.starts_with("python");
}

std::string_view Unquoted(std::string_view word) {
  if (word.size() >= 2 && word.front() == '"' && word.back() == '"') {
    return word.substr(1, word.size() - 2);
  }
  return word;
}

// pip's launcher for a long interpreter path: "#!/bin/sh\n'''exec' "/x/bin/python3" "$0" "$@"".
std::optional<std::string> PipShellForm(std::string_view second_line) {
  constexpr std::string_view kExec = "'''exec' ";
  if (!second_line.starts_with(kExec)) return std::nullopt;
  const auto words = Words(second_line.substr(kExec.size()));
  if (words.empty() || !IsPython(Unquoted(words[0]))) return std::nullopt;
  return std::string(Unquoted(words[0]));
}

}  // namespace

std::optional<std::string> ShebangInterpreter(std::string_view head) {
  if (!head.starts_with("#!")) return std::nullopt;
  const auto end = head.find('\n');
  const std::string_view line = head.substr(2, end == std::string_view::npos ? end : end - 2);
  const auto words = Words(line);
  if (words.empty()) return std::nullopt;
  if (words[0].ends_with("/env")) {
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (words[i].starts_with("-")) continue;  // env -S and the like
      if (IsPython(words[i])) return std::string(words[i]);
      return std::nullopt;
    }
    return std::nullopt;
  }
  if (IsPython(words[0])) return std::string(words[0]);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view rest = head.substr(end + 1);
  return PipShellForm(rest.substr(0, rest.find('\n')));
}

}  // namespace cpplaunch
