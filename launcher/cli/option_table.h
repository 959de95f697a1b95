#pragma once
// The table of torchrun's command-line options (newest torchrun, both spellings): the one
// description of each option, read by every part of the reader (program_options builds the
// Program_options descriptions from it, argv_split applies argparse's word rules with it,
// pet_env names the PET_* variables, option_value checks types and choices, resolve_options
// and options.cpp turn raw values into LaunchOptions) and by the help text. Pure data.

#include <span>
#include <string>
#include <string_view>

namespace cpplaunch {

enum class OptionId {
  kNnodes,
  kNprocPerNode,
  kRdzvBackend,
  kRdzvEndpoint,
  kRdzvId,
  kRdzvConf,
  kStandalone,
  kMaxRestarts,
  kMonitorInterval,
  kStartMethod,
  kEventLogHandler,
  kRole,
  kModule,
  kNoPython,
  kRunPath,
  kLogDir,
  kRedirects,
  kTee,
  kLocalRanksFilter,
  kDuplicateStdoutFilters,
  kDuplicateStderrFilters,
  kNodeRank,
  kMasterAddr,
  kMasterPort,
  kLocalAddr,
  kLogsSpecs,
  kNumaBinding,
  kSignalsToHandle,
  kForwardSignals,  // cpplaunch's own
  kShutdownTimeout,
  kExitBarrierTimeout,  // cpplaunch's own
  kVirtualLocalRank,
  kEngine,
  kSpares,  // cpplaunch's own
  kWorkerStore,
  kLegacyLaunch,  // cpplaunch's own: python -m torch.distributed.launch
  kUseEnv,        // torch.distributed.launch's
  kHangTimeout,   // cpplaunch's own
  kExitCode,      // cpplaunch's own
  kStatusPort,    // cpplaunch's own
  kStatusAddr,    // cpplaunch's own
  kHelp,
  kVersion,  // cpplaunch's own
};

// How argparse converts the option's text. Conversion failures are usage errors (exit 2).
// kHelp and kVersion are flags that end the parse where they stand (argparse's help and
// version actions).
enum class ValueKind { kFlag, kString, kInt, kFloat, kHelp, kVersion };

struct OptionSpec {
  OptionId id;
  std::string_view name;        // canonical spelling, "--nproc-per-node"
  std::string_view alias;       // underscore spelling, "--nproc_per_node", or ""
  std::string_view short_name;  // "-r", or ""
  ValueKind kind;
  std::string_view choices;  // "spawn,fork,forkserver", or "" for any value
  bool has_env;              // PET_<DEST> supplies the default
  // The default: the parser's value for an option that always has one ("1:1", "0"); for
  // flags and options whose default is "not given" (--log-dir) only a note for the help.
  std::string_view default_text;
  std::string_view help;  // one line
  // Words the shell completion offers for an option without `choices` whose usual values are
  // known ("static,c10d,..."); the parser does not restrict the value to them.
  std::string_view completions = {};
};

// In torchrun's declaration order (argparse's usage order).
std::span<const OptionSpec> OptionTable();
const OptionSpec& SpecFor(OptionId id);

// "PET_NPROC_PER_NODE": PET_ + the canonical name without dashes, '-' -> '_', upper case.
std::string EnvNameFor(const OptionSpec& spec);
// Whether the option takes a value (string, int or float); flags, help and version do not.
bool TakesValue(const OptionSpec& spec);
// argparse's name in error messages: "-r/--redirects", "--nproc-per-node/--nproc_per_node".
std::string DisplayName(const OptionSpec& spec);

}  // namespace cpplaunch
