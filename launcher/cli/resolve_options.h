#pragma once
// From the options' text to LaunchOptions: what torchrun does after argparse has parsed.
// Counts, ranges, backends and option conflicts are checked here; a failure is a value
// error (exit 1), thrown as a ParseFailure (parse_failure.h); an empty --master-addr is a
// usage error (exit 2). Types and choices were
// checked before (option_value.h).

#include <map>
#include <string>
#include <vector>

#include "launcher/cli/option_table.h"
#include "launcher/cli/options.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

struct RawValue {
  std::string text;  // "1"/"0" for flags
  OptionSource source = OptionSource::kDefault;
};
// The options given on the command line or through PET_*; absent ones take the table's
// default_text.
using RawValues = std::map<OptionId, RawValue>;

// The host is probed only for --nproc-per-node cpu/gpu/auto. Appends warnings (skipped
// signal names, options --standalone replaces).
LaunchOptions ResolveOptions(const RawValues& raw, const EnvMap& env, const HostProbe& host,
                             std::vector<std::string>& warnings);

}  // namespace cpplaunch
