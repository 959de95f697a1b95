#include "launcher/cli/option_value.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "base/text.h"
#include "launcher/cli/parse_failure.h"
#include "rendezvous/store/endpoint.h"

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

namespace {

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The first control character's description, or "" without one.
std::string ControlCharacter(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!IsControl(c)) continue;
    char line[64];
    std::snprintf(line, sizeof line, "a control character (byte 0x%02x) at byte %zu", c, i + 1);
    return line;
  }
  return "";
}

}  // namespace

std::string Abbreviated(std::string_view value) {
  constexpr std::size_t kWhole = 64;
  constexpr std::size_t kHead = 40;
  if (value.size() <= kWhole) return std::string(value);
  return std::string(value.substr(0, kHead)) + "... (" + std::to_string(value.size()) + " bytes)";
}

std::string OptionValueProblem(std::string_view name, std::string_view value) {
  if (value.size() <= kMaxOptionValueBytes) return "";
  return std::string(name) + ": a value of " + std::to_string(value.size()) +
         " bytes; an option's value may have at most " + std::to_string(kMaxOptionValueBytes) +
         " bytes";
}

std::string RunIdProblem(std::string_view name, std::string_view id) {
  const std::string option(name);
  if (id.size() > kMaxRunIdBytes) {
    return option + ": a run id of " + std::to_string(id.size()) + " bytes; it may have at most " +
           std::to_string(kMaxRunIdBytes) +
           " (it names the run's log directory); give a shorter one, such as the job's id";
  }
  if (std::string control = ControlCharacter(id); !control.empty()) {
    return option + ": the run id has " + control + "; give one of printable characters";
  }
  if (id.find('/') != std::string_view::npos) {
    return option + " '" + std::string(id) +
           "': a run id may not contain '/' (it names the run's log directory); use '-' or '_'";
  }
  return "";
}

std::string RoleProblem(std::string_view name, std::string_view role) {
  if (std::string control = ControlCharacter(role); !control.empty()) {
    return std::string(name) + ": the role name has " + control +
           " (it starts the workers' prefixed output lines); give one of printable characters";
  }
  return "";
}

std::string BareAddress(std::string_view address) {
  if (address.size() > 2 && address.front() == '[' && address.back() == ']' &&
      address.find(':') != std::string_view::npos) {
    return std::string(address.substr(1, address.size() - 2));
  }
  return std::string(address);
}

// Empty is fine: as torchrun, an empty --local-addr is no address (this host's own is found).
// An endpoint's host characters, and what an IPv6 literal may carry besides: a zone (%eth0).
std::string HostAddressProblem(std::string_view name, std::string_view address,
                               std::string_view hint) {
  const auto bad = std::find_if_not(address.begin(), address.end(),
                                    [](char c) { return IsHostCharacter(c) || c == '%'; });
  if (bad == address.end()) return "";
  const std::string what =
      IsControl(static_cast<unsigned char>(*bad))
          ? ControlCharacter(address)
          : "'" + std::string(1, *bad) + "' at byte " + std::to_string(bad - address.begin() + 1);
  return std::string(name) + " " + Quote(Abbreviated(address)) + " has " + what + ": " +
         std::string(hint);
}

std::string PathProblem(std::string_view name, std::string_view path) {
  if (path.size() <= kMaxPathBytes) return "";
  return std::string(name) + ": a path of " + std::to_string(path.size()) +
         " bytes; Linux allows at most " + std::to_string(kMaxPathBytes);
}

}  // namespace cpplaunch
