#include "launcher/cli/options.h"

#include <boost/program_options/errors.hpp>
#include <boost/program_options/parsers.hpp>

#include "base/text.h"
#include "launcher/cli/argv_split.h"
#include "launcher/cli/engine_options.h"
#include "launcher/cli/help_text.h"
#include "launcher/cli/option_suggestion.h"
#include "launcher/cli/option_value.h"
#include "launcher/cli/parse_failure.h"
#include "launcher/cli/pet_env.h"
#include "launcher/cli/program_options.h"
#include "launcher/cli/resolve_options.h"
#include "launcher/placement/gpu_count.h"

namespace cpplaunch {
namespace {

namespace po = boost::program_options;

// argparse's short options, long options with "=v" or a separate value, and unique prefixes
// (allow_guessing). No positional options: SplitAtScript took the script off already.
constexpr int kStyle =
    po::command_line_style::allow_short | po::command_line_style::allow_dash_for_short |
    po::command_line_style::short_allow_adjacent | po::command_line_style::short_allow_next |
    po::command_line_style::allow_sticky | po::command_line_style::allow_long |
    po::command_line_style::long_allow_adjacent | po::command_line_style::long_allow_next |
    po::command_line_style::allow_guessing;

// PET_* defaults, read before the command line as torchrun reads them when it builds its
// parser: so a flag's variable must be an integer even when -h is given (else exit 1).
// Flags are converted in table order (RawValues' order), so the first bad variable reported
// does not depend on the environment's order.
RawValues ReadEnvironment(const EnvMap& env) {
  RawValues raw;
  for (const po::option& option : ParsePetEnvironment(env).options) {
    raw[SpecForKey(option.string_key).id] = {option.value.front(), OptionSource::kEnvironment};
  }
  for (auto& [id, value] : raw) {
    const OptionSpec& spec = SpecFor(id);
    if (spec.kind == ValueKind::kFlag) value.text = FlagFromEnvironment(spec, value.text);
  }
  return raw;
}

// argparse's message, and the nearest option for the first word that looks like a typo.
std::string Unrecognized(const std::vector<std::string>& words) {
  std::string message = "unrecognized arguments: " + Join(words, " ");
  for (const std::string& word : words) {
    if (auto near = SuggestOption(word)) return message + " (did you mean " + *near + "?)";
  }
  return message;
}

// An error about a value that came from a PET_* variable names the variable: the user never
// typed the option. The option is recognized by any of its spellings in the message.
void NameTheVariable(ParseFailure& failure, const RawValues& raw) {
  for (const auto& [id, value] : raw) {
    if (value.source != OptionSource::kEnvironment) continue;
    const OptionSpec& spec = SpecFor(id);
    const std::string_view dest = spec.alias.empty() ? spec.name : spec.alias.substr(2);
    for (std::string_view name : {spec.name, spec.alias, dest}) {
      if (name.empty() || failure.message.find(name) == std::string::npos) continue;
      failure.message +=
          " (from the environment: " + EnvNameFor(spec) + "=" + Abbreviated(value.text) + ")";
      return;
    }
  }
}

// The size of the PET_* values still in effect (the command line wins), before any is quoted.
void CheckEnvironmentSizes(const RawValues& raw) {
  for (const auto& [id, value] : raw) {
    if (value.source != OptionSource::kEnvironment) continue;
    std::string problem = OptionValueProblem(EnvNameFor(SpecFor(id)), value.text);
    if (!problem.empty()) Refuse(problem);
  }
}

// Environment values go through the option's type (exit 2) but not its choices.
void CheckEnvironmentTypes(const RawValues& raw) {
  for (const auto& [id, value] : raw) {
    if (value.source == OptionSource::kEnvironment) CheckType(SpecFor(id), value.text);
  }
}

// Program_options reads the words before the script. The parsed options are walked here
// rather than stored in a variables_map: argparse checks each value as it meets it (so the
// first bad word is the one reported) and keeps the last of repeated options, where store()
// would refuse a repeat.
void ReadOptionWords(const std::vector<std::string>& words, RawValues& raw) {
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::command_line_parser(words).options(OptionDescriptions()).style(kStyle).run();
  } catch (const po::error& e) {
    // Not expected: SplitAtScript passes only words argparse accepts, in forms Program_options
    // reads alike. Should one slip through, it is still a command-line error.
    UsageError(e.what());
  }
  for (const po::option& option : parsed.options) {
    const OptionSpec& spec = SpecForKey(option.string_key);
    if (spec.kind == ValueKind::kFlag) {
      raw[spec.id] = {"1", OptionSource::kCommandLine};
      continue;
    }
    const std::string& value = option.value.front();
    if (std::string problem = OptionValueProblem(spec.name, value); !problem.empty()) {
      Refuse(problem);
    }
    CheckType(spec, value);
    CheckChoice(spec, value);
    raw[spec.id] = {value, OptionSource::kCommandLine};
  }
}

// Fills `result`; throws ParseFailure at the first error (warnings already added stay).
void Parse(const std::vector<std::string>& argv, const EnvMap& env, const HostProbe& host,
           ParseResult& result) {
  RawValues raw = ReadEnvironment(env);
  ArgvSplit split = SplitAtScript(argv);
  ReadOptionWords(split.option_words, raw);
  if (split.error) UsageError(*split.error);
  if (split.help) {
    result.status = ParseStatus::kHelp;
    result.message = HelpText();
    return;
  }
  if (split.version) {
    result.status = ParseStatus::kVersion;
    return;
  }
  CheckEnvironmentSizes(raw);
  try {
    CheckEnvironmentTypes(raw);
  } catch (ParseFailure& failure) {
    NameTheVariable(failure, raw);
    throw;
  }
  if (!split.script) {
    UsageError("the following arguments are required: training_script, training_script_args");
  }
  if (!split.unrecognized.empty()) UsageError(Unrecognized(split.unrecognized));
  const Engine engine = ApplyEngine(raw, env, result.notes);
  try {
    result.options = ResolveOptions(raw, env, host, result.warnings);
  } catch (ParseFailure& failure) {
    NameTheVariable(failure, raw);
    throw;
  }
  result.options.engine = EngineName(engine);
  result.options.training_script = std::move(*split.script);
  result.options.training_script_args = std::move(split.script_args);
}

}  // namespace

ExitCode ExitCodeFor(ParseStatus status) {
  switch (status) {
    case ParseStatus::kOk:
    case ParseStatus::kHelp:
    case ParseStatus::kVersion:
      return ExitCode::kSuccess;
    case ParseStatus::kUsageError:
    case ParseStatus::kRefused:
      return ExitCode::kUsage;
    case ParseStatus::kValueError:
      return ExitCode::kFailure;
  }
  return ExitCode::kFailure;
}

int ParseResult::exit_code() const { return ProcessExitCode(ExitCodeFor(status)); }

HostProbe RealHostProbe() { return HostProbe{OnlineCpuCount, PhysicalGpuCount}; }

ParseResult ParseOptions(const std::vector<std::string>& argv, const EnvMap& env,
                         const HostProbe& host) {
  ParseResult result;
  try {
    Parse(argv, env, host, result);
  } catch (const ParseFailure& failure) {
    result.status = failure.status;
    result.message = failure.message;
  }
  return result;
}

}  // namespace cpplaunch
