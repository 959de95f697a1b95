#include "launcher/help_text.h"

#include "launcher/option_table.h"

namespace cpplaunch {
namespace {

constexpr size_t kHelpColumn = 34;

// "-r, --redirects VALUE" / "--nproc-per-node, --nproc_per_node VALUE".
std::string Spellings(const OptionSpec& spec) {
  std::string text = "  ";
  if (!spec.short_name.empty()) text += std::string(spec.short_name) + ", ";
  text += spec.name;
  if (!spec.alias.empty()) text += ", " + std::string(spec.alias);
  if (spec.kind != ValueKind::kFlag && spec.kind != ValueKind::kHelp) text += " VALUE";
  return text;
}

std::string Details(const OptionSpec& spec) {
  std::string details;
  if (!spec.choices.empty()) details += "one of " + std::string(spec.choices) + "; ";
  if (!spec.default_text.empty()) details += "default: " + std::string(spec.default_text);
  if (spec.has_env) details += (details.empty() ? "" : "; ") + std::string("env ") + EnvNameFor(spec);
  return details;
}

std::string OptionEntry(const OptionSpec& spec) {
  std::string entry = Spellings(spec);
  if (entry.size() + 2 > kHelpColumn) {
    entry += "\n" + std::string(kHelpColumn, ' ');
  } else {
    entry += std::string(kHelpColumn - entry.size(), ' ');
  }
  entry += std::string(spec.help) + "\n";
  const std::string details = Details(spec);
  if (!details.empty()) entry += std::string(kHelpColumn, ' ') + "(" + details + ")\n";
  return entry;
}

}  // namespace

std::string UsageLine() {
  return "usage: cpplaunch [options] training_script [training_script_args ...]";
}

std::string HelpText() {
  std::string text = UsageLine() + "\n\n";
  text +=
      "Torch Distributed Elastic Training Launcher, compatible with torchrun.\n"
      "Options may be abbreviated to any unique prefix (--nproc 4) and take their value\n"
      "as --opt=value or --opt value. Every option except --logs-specs and --numa-binding\n"
      "can also be set through its PET_ environment variable; the command line wins.\n\n"
      "positional arguments:\n"
      "  training_script                 the program or script to launch on every worker\n"
      "  training_script_args            passed to the script unchanged ($local_rank and\n"
      "                                  ${local_rank} are replaced, $$ becomes $)\n\n"
      "options:\n";
  for (const OptionSpec& spec : OptionTable()) text += OptionEntry(spec);
  text +=
      "\nexit status:\n"
      "  0  every worker succeeded\n"
      "  1  a worker failed after all restarts, the launcher was signalled, the rendezvous\n"
      "     failed, or an option value was rejected\n"
      "  2  the command line could not be parsed\n";
  return text;
}

}  // namespace cpplaunch
