#include "launcher/cli/help_text.h"

#include <vector>

#include "launcher/cli/option_table.h"

namespace cpplaunch {
namespace {

constexpr size_t kHelpColumn = 34;

// "-r, --redirects VALUE" / "--nproc-per-node, --nproc_per_node VALUE".
std::string Spellings(const OptionSpec& spec) {
  std::string text = "  ";
  if (!spec.short_name.empty()) text += std::string(spec.short_name) + ", ";
  text += spec.name;
  if (!spec.alias.empty()) text += ", " + std::string(spec.alias);
  if (TakesValue(spec)) text += " VALUE";
  return text;
}

// Splits text at ';' separators into lines that fit the help column.
std::vector<std::string> Wrap(const std::string& text) {
  constexpr size_t kWidth = 80 - kHelpColumn;
  std::vector<std::string> lines(1);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("; ", start);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string piece = text.substr(start, end - start);
    if (!lines.back().empty() && lines.back().size() + piece.size() > kWidth) lines.emplace_back();
    lines.back() += lines.back().empty() && piece.front() == ' ' ? piece.substr(1) : piece;
    start = end;
  }
  return lines;
}

std::string OptionEntry(const OptionSpec& spec) {
  std::string entry = Spellings(spec);
  // As argparse lays help out: spellings that reach into the help column (with two spaces to
  // spare) push the help text to the next line.
  if (entry.size() + 2 > kHelpColumn) {
    entry += "\n" + std::string(kHelpColumn, ' ');
  } else {
    entry += std::string(kHelpColumn - entry.size(), ' ');
  }
  entry += std::string(spec.help) + "\n";
  for (const std::string& line : Wrap("(" + OptionDetails(spec) + ")")) {
    if (line != "()") entry += std::string(kHelpColumn, ' ') + line + "\n";
  }
  return entry;
}

}  // namespace

std::string OptionDetails(const OptionSpec& spec) {
  std::string details;
  if (!spec.choices.empty()) details += "one of " + std::string(spec.choices) + "; ";
  if (!spec.default_text.empty()) details += "default: " + std::string(spec.default_text);
  if (spec.has_env)
    details += (details.empty() ? "" : "; ") + std::string("env ") + EnvNameFor(spec);
  return details;
}

std::string UsageLine() {
  return "usage: cpplaunch [options] training_script [training_script_args ...]";
}

std::string HelpText() {
  std::string text = UsageLine() + "\n\n";
  text +=
      "Torch Distributed Elastic Training Launcher, compatible with torchrun.\n"
      "Options may be abbreviated to any unique prefix (--nproc 4) and take their\n"
      "value as --opt=value or --opt value. Every option except --logs-specs and\n"
      "--numa-binding can also be set through its PET_ environment variable; the\n"
      "command line wins.\n\n"
      "positional arguments:\n"
      "  training_script                 the script or program every worker runs\n"
      "  training_script_args            passed to the script unchanged, except that\n"
      "                                  $local_rank and ${local_rank} are replaced\n"
      "                                  and $$ becomes $\n\n"
      "The workers run PYTHON_EXEC from the environment, else the python3 found on\n"
      "PATH, or when that one has no torch another python3 that has it (said in one\n"
      "line); as the drop-in torchrun, the interpreter of the torchrun it shadows.\n"
      "--no-python runs the script itself.\n\n"
      "options:\n";
  for (const OptionSpec& spec : OptionTable()) text += OptionEntry(spec);
  text +=
      "\nexit status:\n"
      "  0  every worker succeeded\n"
      "  1  a worker failed after all restarts, the launcher was signalled, the\n"
      "     rendezvous failed, or an option value was rejected\n"
      "  2  the command line could not be parsed, or asks for something cpplaunch\n"
      "     does not support\n"
      "  with --exit-code=worker, a failed job returns its root-cause worker's own\n"
      "  code instead of 1 (128+N for signal N)\n";
  return text;
}

}  // namespace cpplaunch
