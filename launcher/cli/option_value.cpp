#include "launcher/cli/option_value.h"

#include <vector>

#include "base/text.h"
#include "launcher/cli/parse_failure.h"

namespace cpplaunch {

void CheckType(const OptionSpec& spec, std::string_view text) {
  const std::string prefix = "argument " + DisplayName(spec) + ": ";
  // argparse's type=int is Python's int(): a value beyond the C int is refused here because
  // every integer option is stored in an int.
  if (spec.kind == ValueKind::kInt && !ToInt(ParsePythonInt(text))) {
    UsageError(prefix + "invalid int value: " + Quote(text));
  }
  if (spec.kind == ValueKind::kFloat && !ParsePythonFloat(text)) {
    UsageError(prefix + "invalid float value: " + Quote(text));
  }
}

void CheckChoice(const OptionSpec& spec, std::string_view text) {
  if (spec.choices.empty()) return;
  std::vector<std::string> listed;
  for (std::string_view choice : Split(spec.choices, ',')) {
    if (choice == text) return;
    listed.push_back(Quote(choice));
  }
  UsageError("argument " + DisplayName(spec) + ": invalid choice: " + Quote(text) +
             " (choose from " + Join(listed, ", ") + ")");
}

// torchrun's check_env action reads a flag's variable as bool(int(value)): any non-zero integer
// sets it, and text that is not an integer is a ValueError.
std::string FlagFromEnvironment(const OptionSpec& spec, const std::string& value) {
  auto number = ParsePythonInt(value);
  if (!number) {
    ValueError(EnvNameFor(spec) + "=" + value + ": a flag's variable must be an integer (0 or 1)");
  }
  return *number != 0 ? "1" : "0";
}

}  // namespace cpplaunch
