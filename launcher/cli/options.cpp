#include "launcher/cli/options.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "launcher/cli/gpu_count.h"
#include "launcher/cli/help_text.h"
#include "launcher/cli/option_table.h"
#include "launcher/cli/signal_list.h"
#include "worker_env/env_names.h"

namespace cpplaunch {
namespace {

// Internal control flow: the first error ends the parse.
struct Failure {
  ParseStatus status;
  std::string message;
};
[[noreturn]] void Usage(std::string message) {
  throw Failure{ParseStatus::kUsageError, std::move(message)};
}
[[noreturn]] void Invalid(std::string message) {
  throw Failure{ParseStatus::kValueError, std::move(message)};
}

struct RawValue {
  std::string text;  // "1"/"0" for flags
  OptionSource source = OptionSource::kDefault;
};
using RawValues = std::map<OptionId, RawValue>;

// ---------------------------------------------------------------------------------------
// Text as Python reads it.

std::string_view StripSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Python's int(text): surrounding whitespace, an optional sign, decimal digits with
// single underscores between them. nullopt when malformed or beyond 64 bits.
std::optional<long long> ParsePythonInt(std::string_view text) {
  text = StripSpace(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || !IsDigit(text.front()) || !IsDigit(text.back())) return std::nullopt;
  unsigned long long value = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '_' && IsDigit(text[i + 1])) continue;  // back() is a digit: i+1 valid
    if (!IsDigit(text[i])) return std::nullopt;
    if (value > (std::numeric_limits<unsigned long long>::max() - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  if (value > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) {
    return std::nullopt;
  }
  const auto signed_value = static_cast<long long>(value);
  return negative ? -signed_value : signed_value;
}

// Python's float(text), without hexadecimal forms.
std::optional<double> ParsePythonFloat(std::string_view text) {
  std::string s(StripSpace(text));
  std::erase(s, '_');
  if (s.empty() || s.find_first_of("xX") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return value;
}

std::optional<int> ToInt(std::optional<long long> value) {
  if (!value || *value < std::numeric_limits<int>::min() ||
      *value > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

// Python's str.split(sep): empty pieces kept.
std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

// ---------------------------------------------------------------------------------------
// argparse's type and choice checks (usage errors).

void CheckType(const OptionSpec& spec, std::string_view text) {
  const std::string prefix = "argument " + DisplayName(spec) + ": ";
  if (spec.kind == ValueKind::kInt && !ToInt(ParsePythonInt(text))) {
    Usage(prefix + "invalid int value: " + Quote(text));
  }
  if (spec.kind == ValueKind::kFloat && !ParsePythonFloat(text)) {
    Usage(prefix + "invalid float value: " + Quote(text));
  }
}

void CheckChoice(const OptionSpec& spec, std::string_view text) {
  if (spec.choices.empty()) return;
  std::string listed;
  for (std::string_view choice : Split(spec.choices, ',')) {
    if (choice == text) return;
    listed += (listed.empty() ? "" : ", ") + Quote(choice);
  }
  Usage("argument " + DisplayName(spec) + ": invalid choice: " + Quote(text) + " (choose from " +
        listed + ")");
}

// ---------------------------------------------------------------------------------------
// PET_* defaults. Read before the command line, as torchrun reads them when it builds its
// parser: a flag's variable must be an integer even when -h is given (else exit 1).

void ReadEnvDefaults(const EnvMap& env, RawValues& raw) {
  for (const OptionSpec& spec : OptionTable()) {
    if (!spec.has_env) continue;
    const std::string name = EnvNameFor(spec);
    auto value = Lookup(env, name);
    if (!value) continue;
    if (spec.kind != ValueKind::kFlag) {
      raw[spec.id] = {*value, OptionSource::kEnvironment};
      continue;
    }
    auto number = ParsePythonInt(*value);
    if (!number) {
      Invalid(name + "=" + *value + ": a flag's variable must be an integer (0 or 1)");
    }
    raw[spec.id] = {*number != 0 ? "1" : "0", OptionSource::kEnvironment};
  }
}

// Environment values go through the option's type (exit 2) but not its choices.
void CheckEnvTypes(const RawValues& raw) {
  for (const auto& [id, value] : raw) {
    if (value.source == OptionSource::kEnvironment) CheckType(SpecFor(id), value.text);
  }
}

// ---------------------------------------------------------------------------------------
// Classifying one command-line word, as argparse's _parse_optional does.

struct Match {
  const OptionSpec* spec = nullptr;
  std::string option_string;                  // as matched: "-r", "--nproc_per_node"
  std::optional<std::string> explicit_value;  // from "--opt=v", "-r3", "-r=3"
};

enum class WordKind { kPositional, kOption, kUnknownOption, kEndOfOptions };

struct Word {
  WordKind kind = WordKind::kPositional;
  Match match;
};

std::vector<std::string_view> OptionStrings(const OptionSpec& spec) {
  std::vector<std::string_view> out;
  for (std::string_view s : {spec.short_name, spec.name, spec.alias}) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

std::optional<Match> ExactMatch(std::string_view text) {
  for (const OptionSpec& spec : OptionTable()) {
    for (std::string_view s : OptionStrings(spec)) {
      if (s == text) return Match{&spec, std::string(s), std::nullopt};
    }
  }
  return std::nullopt;
}

// argparse's _get_option_tuples: long prefixes ("--nproc", "--nproc=4") and a short option
// glued to its value ("-r3", "-mr3").
std::vector<Match> PrefixMatches(std::string_view arg) {
  std::vector<Match> matches;
  const bool is_long = arg.size() > 1 && arg[1] == '-';
  const size_t eq = arg.find('=');
  const std::string_view prefix = is_long ? arg.substr(0, eq) : arg;
  for (const OptionSpec& spec : OptionTable()) {
    for (std::string_view s : OptionStrings(spec)) {
      if (!is_long && s == arg.substr(0, 2)) {
        matches.push_back({&spec, std::string(s), std::string(arg.substr(2))});
      } else if (s.starts_with(prefix)) {
        std::optional<std::string> value;
        if (is_long && eq != std::string_view::npos) value = std::string(arg.substr(eq + 1));
        matches.push_back({&spec, std::string(s), value});
      }
    }
  }
  return matches;
}

// Both spellings of one option are one candidate (argparse before 3.12 would call
// "--nproc" ambiguous between --nproc-per-node and --nproc_per_node; torchrun 1.13.1, with
// one spelling, accepted it).
std::optional<Match> UniqueMatch(std::string_view arg) {
  const std::vector<Match> matches = PrefixMatches(arg);
  if (matches.empty()) return std::nullopt;
  std::string candidates;
  bool ambiguous = false;
  for (const Match& m : matches) {
    ambiguous = ambiguous || m.spec != matches.front().spec;
    candidates += (candidates.empty() ? "" : ", ") + m.option_string;
  }
  if (ambiguous) Usage("ambiguous option: " + std::string(arg) + " could match " + candidates);
  return matches.front();
}

bool LooksLikeNegativeNumber(std::string_view s) {
  if (s.size() < 2 || s[0] != '-') return false;
  s.remove_prefix(1);
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos) return std::all_of(s.begin(), s.end(), IsDigit);
  const std::string_view whole = s.substr(0, dot), frac = s.substr(dot + 1);
  return !frac.empty() && std::all_of(whole.begin(), whole.end(), IsDigit) &&
         std::all_of(frac.begin(), frac.end(), IsDigit);
}

Word Classify(std::string_view arg) {
  if (arg.empty() || arg[0] != '-') return {WordKind::kPositional, {}};
  if (arg == "--") return {WordKind::kEndOfOptions, {}};
  if (auto m = ExactMatch(arg)) return {WordKind::kOption, *m};
  if (arg.size() == 1) return {WordKind::kPositional, {}};
  if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
    if (auto m = ExactMatch(arg.substr(0, eq))) {
      m->explicit_value = std::string(arg.substr(eq + 1));
      return {WordKind::kOption, *m};
    }
  }
  if (auto m = UniqueMatch(arg)) return {WordKind::kOption, *m};
  if (LooksLikeNegativeNumber(arg) || arg.find(' ') != std::string_view::npos) {
    return {WordKind::kPositional, {}};
  }
  return {WordKind::kUnknownOption, {}};
}

// ---------------------------------------------------------------------------------------
// Consuming the command line.

struct CommandLine {
  bool help = false;
  std::optional<std::string> script;
  std::vector<std::string> script_args;
  std::vector<std::string> unrecognized;
};

bool IsFlag(const OptionSpec& spec) {
  return spec.kind == ValueKind::kFlag || spec.kind == ValueKind::kHelp;
}

// "-mr3": after the flag -m, "r3" names the next short option (-r) and its glued value.
Match NextInCluster(const Match& flag) {
  const std::string& rest = *flag.explicit_value;
  const bool is_short = flag.option_string.size() == 2;
  auto next = is_short && !rest.empty() ? ExactMatch("-" + rest.substr(0, 1)) : std::nullopt;
  if (!next) {
    Usage("argument " + DisplayName(*flag.spec) + ": ignored explicit argument " + Quote(rest));
  }
  if (rest.size() > 1) next->explicit_value = rest.substr(1);
  return *next;
}

// Returns the index of the next word to classify; sets *help.
size_t ConsumeOption(Match match, const std::vector<std::string>& argv, size_t i, RawValues& raw,
                     bool* help) {
  while (IsFlag(*match.spec)) {
    if (match.spec->kind == ValueKind::kHelp) {
      *help = true;
      return i + 1;
    }
    raw[match.spec->id] = {"1", OptionSource::kCommandLine};
    if (!match.explicit_value) return i + 1;
    match = NextInCluster(match);
  }
  const OptionSpec& spec = *match.spec;
  std::string value;
  if (match.explicit_value) {
    value = *match.explicit_value;
  } else if (i + 1 < argv.size() && Classify(argv[i + 1]).kind == WordKind::kPositional) {
    value = argv[++i];
  } else {
    Usage("argument " + DisplayName(spec) + ": expected one argument");
  }
  CheckType(spec, value);
  CheckChoice(spec, value);
  raw[spec.id] = {value, OptionSource::kCommandLine};
  return i + 1;
}

CommandLine ReadCommandLine(const std::vector<std::string>& argv, RawValues& raw) {
  CommandLine cl;
  size_t i = 0;
  while (i < argv.size() && !cl.help && !cl.script) {
    const Word word = Classify(argv[i]);
    switch (word.kind) {
      case WordKind::kEndOfOptions:
        ++i;
        if (i < argv.size()) cl.script = argv[i++];
        break;
      case WordKind::kPositional:
        cl.script = argv[i++];
        break;
      case WordKind::kUnknownOption:
        cl.unrecognized.push_back(argv[i++]);
        break;
      case WordKind::kOption:
        i = ConsumeOption(word.match, argv, i, raw, &cl.help);
        break;
    }
  }
  if (cl.script) cl.script_args.assign(argv.begin() + static_cast<long>(i), argv.end());
  return cl;
}

// ---------------------------------------------------------------------------------------
// From text to typed values (value errors: torchrun dies with exit 1 after parsing).

const std::string* Find(const RawValues& raw, OptionId id) {
  auto it = raw.find(id);
  return it == raw.end() ? nullptr : &it->second.text;
}

std::string TextOr(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text ? *text : std::string(SpecFor(id).default_text);
}

bool FlagOf(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text && *text == "1";
}

int IntOf(const RawValues& raw, OptionId id) {
  return ToInt(ParsePythonInt(TextOr(raw, id))).value_or(0);  // checked by CheckType
}

std::optional<std::string> OptionalTextOf(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

void ResolveNnodes(const std::string& text, LaunchOptions& o) {
  const size_t colon = text.find(':');
  if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos) {
    Invalid("nnodes=" + text + " is not in \"MIN:MAX\" format");
  }
  const std::string min_text = text.substr(0, colon);
  const std::string max_text = colon == std::string::npos ? min_text : text.substr(colon + 1);
  auto min = ToInt(ParsePythonInt(min_text));
  auto max = ToInt(ParsePythonInt(max_text));
  if (!min || !max) Invalid("--nnodes " + text + ": expected N or MIN:MAX with integers");
  if (!(0 < *min && *min <= *max)) Invalid("--nnodes " + text + ": need 0 < MIN <= MAX");
  o.min_nodes = *min;
  o.max_nodes = *max;
}

int VisibleGpus(const EnvMap& env, const HostProbe& host) {
  return VisibleGpuCount(Lookup(env, env_names::kCudaVisibleDevices), host.physical_gpus());
}

int ResolveNproc(const std::string& text, const EnvMap& env, const HostProbe& host) {
  if (auto number = ParsePythonInt(text)) {
    if (*number < 1 || *number > 1 << 20) {
      Invalid("--nproc-per-node " + text + ": need at least 1 worker per node");
    }
    return static_cast<int>(*number);
  }
  if (text == "cpu") return host.online_cpus();
  if (text == "auto") {
    const int gpus = VisibleGpus(env, host);
    return gpus > 0 ? gpus : host.online_cpus();
  }
  if (text == "gpu") {
    const int gpus = VisibleGpus(env, host);
    if (gpus > 0) return gpus;
    auto cvd = Lookup(env, env_names::kCudaVisibleDevices);
    Invalid("gpu: no NVIDIA GPU is visible (" +
            (cvd ? "CUDA_VISIBLE_DEVICES=" + *cvd : "CUDA_VISIBLE_DEVICES is not set") + ")");
  }
  if (text == "xpu") Invalid("Xpu is not available.");
  Invalid("Unsupported nproc_per_node value: " + text);
}

std::chrono::nanoseconds ResolveMonitorInterval(const std::string& text) {
  const double seconds = ParsePythonFloat(text).value_or(0);
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) {
    Invalid("--monitor-interval " + text + ": need a positive number of seconds");
  }
  return std::chrono::nanoseconds(static_cast<long long>(std::ceil(seconds * 1e9)));
}

std::optional<std::set<int>> ResolveRanksFilter(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::set<int> ranks;
  for (std::string_view item : Split(text, ',')) {
    auto rank = ToInt(ParsePythonInt(item));
    if (!rank) {
      Invalid(
          "--local_ranks_filter must be a comma-separated list of integers e.g. "
          "--local_ranks_filter=0,1,2");
    }
    ranks.insert(*rank);
  }
  return ranks;
}

// torchrun's comma_separated_list: ",," is a literal comma.
std::vector<std::string> SplitEscapedCommas(std::string_view text) {
  std::vector<std::string> items(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != ',') {
      items.back() += text[i];
    } else if (i + 1 < text.size() && text[i + 1] == ',') {
      items.back() += ',';
      ++i;
    } else {
      items.emplace_back();
    }
  }
  return items;
}

std::vector<std::string> ResolveFilters(const RawValues& raw, OptionId id) {
  const std::string* text = Find(raw, id);
  return text ? SplitEscapedCommas(*text) : std::vector<std::string>{};
}

StdSpec ResolveStd(const RawValues& raw, OptionId id) {
  std::string error;
  auto spec = StdSpec::Parse(TextOr(raw, id), &error);
  if (!spec) {
    Invalid(std::string(id == OptionId::kRedirects ? "-r/--redirects" : "-t/--tee") + ": " + error);
  }
  return *spec;
}

std::chrono::seconds ResolveShutdownTimeout(const RawValues& raw, const EnvMap& env) {
  int seconds = 30;
  if (Find(raw, OptionId::kShutdownTimeout)) {
    seconds = IntOf(raw, OptionId::kShutdownTimeout);
  } else if (auto text = Lookup(env, env_names::kShutdownTimeout)) {
    auto value = ToInt(ParsePythonInt(*text));
    if (!value)
      Invalid(std::string(env_names::kShutdownTimeout) + "=" + *text + " is not an integer");
    seconds = *value;
  }
  if (seconds < 0) {
    Invalid("shutdown_timeout must be non-negative, got " + std::to_string(seconds));
  }
  return std::chrono::seconds(seconds);
}

void CheckBackend(const LaunchOptions& o) {
  if (o.standalone) return;  // torchrun replaces the backend with c10d before looking it up
  for (std::string_view known : {"static", "c10d", "etcd", "etcd-v2"}) {
    if (o.rdzv_backend == known) return;
  }
  Invalid("Rendezvous handler for rdzv_backend '" + o.rdzv_backend +
          "' is not registered (known: static, c10d, etcd, etcd-v2)");
}

void ResolveSizes(const RawValues& raw, const EnvMap& env, const HostProbe& host,
                  LaunchOptions& o) {
  ResolveNnodes(TextOr(raw, OptionId::kNnodes), o);
  o.max_restarts = IntOf(raw, OptionId::kMaxRestarts);
  if (o.max_restarts < 0) {
    Invalid("max_restarts must be non-negative, got " + std::to_string(o.max_restarts));
  }
  o.nproc_per_node_text = TextOr(raw, OptionId::kNprocPerNode);
  o.nproc_per_node = ResolveNproc(o.nproc_per_node_text, env, host);
}

void ResolveRendezvous(const RawValues& raw, LaunchOptions& o) {
  o.rdzv_backend = TextOr(raw, OptionId::kRdzvBackend);
  o.rdzv_endpoint = TextOr(raw, OptionId::kRdzvEndpoint);
  o.rdzv_id = TextOr(raw, OptionId::kRdzvId);
  std::string error;
  auto conf = RdzvConfig::Parse(TextOr(raw, OptionId::kRdzvConf), &error);
  if (!conf) Invalid(error);
  o.rdzv_conf = *conf;
  o.standalone = FlagOf(raw, OptionId::kStandalone);
  o.node_rank = IntOf(raw, OptionId::kNodeRank);
  if (o.node_rank < 0)
    Invalid("--node-rank must be non-negative, got " + std::to_string(o.node_rank));
  o.master_addr = TextOr(raw, OptionId::kMasterAddr);
  o.master_port = IntOf(raw, OptionId::kMasterPort);
  if (o.master_port < 0 || o.master_port > 65535) {
    Invalid("--master-port " + std::to_string(o.master_port) + ": need 0..65535 (0 = a free port)");
  }
  o.local_addr = OptionalTextOf(raw, OptionId::kLocalAddr);
}

void ResolveOutput(const RawValues& raw, LaunchOptions& o) {
  o.local_ranks_filter = ResolveRanksFilter(TextOr(raw, OptionId::kLocalRanksFilter));
  o.logs_specs = OptionalTextOf(raw, OptionId::kLogsSpecs);
  o.log_dir = OptionalTextOf(raw, OptionId::kLogDir);
  o.redirects = ResolveStd(raw, OptionId::kRedirects);
  o.tee = ResolveStd(raw, OptionId::kTee);
  o.duplicate_stdout_filters = ResolveFilters(raw, OptionId::kDuplicateStdoutFilters);
  o.duplicate_stderr_filters = ResolveFilters(raw, OptionId::kDuplicateStderrFilters);
}

void ResolveWorkers(const RawValues& raw, const EnvMap& env, LaunchOptions& o,
                    std::vector<std::string>& warnings) {
  o.monitor_interval = ResolveMonitorInterval(TextOr(raw, OptionId::kMonitorInterval));
  o.start_method = TextOr(raw, OptionId::kStartMethod);
  o.event_log_handler = TextOr(raw, OptionId::kEventLogHandler);
  o.role = TextOr(raw, OptionId::kRole);
  o.numa_binding = OptionalTextOf(raw, OptionId::kNumaBinding);
  o.signals_to_handle_text = TextOr(raw, OptionId::kSignalsToHandle);
  SignalList signals = ParseSignalList(o.signals_to_handle_text);
  o.signals_to_handle = std::move(signals.signals);
  warnings.insert(warnings.end(), signals.warnings.begin(), signals.warnings.end());
  o.shutdown_timeout = ResolveShutdownTimeout(raw, env);
  o.virtual_local_rank = FlagOf(raw, OptionId::kVirtualLocalRank);
  o.module = FlagOf(raw, OptionId::kModule);
  o.no_python = FlagOf(raw, OptionId::kNoPython);
  o.run_path = FlagOf(raw, OptionId::kRunPath);
  if (!o.run_path && o.module && o.no_python) {  // --run-path takes precedence in torchrun
    Invalid("Don't use both the '--no-python' flag and the '--module' flag at the same time.");
  }
}

void RecordSources(const RawValues& raw, LaunchOptions& o) {
  for (const auto& [id, value] : raw) o.sources[std::string(SpecFor(id).name)] = value.source;
}

// Static rendezvous: node ranks are 0..nnodes-1; a larger one would wait for a slot that
// never exists until the rendezvous timeout (torchrun hangs the same way).
void CheckNodeRank(const LaunchOptions& o) {
  if (o.rdzv_backend != "static" || o.standalone || o.node_rank < o.max_nodes) return;
  Invalid("--node-rank " + std::to_string(o.node_rank) +
          " is out of range for --nnodes=" + std::to_string(o.max_nodes) +
          " (node ranks are 0 to " + std::to_string(o.max_nodes - 1) + ")");
}

// --standalone replaces the rendezvous options, as torchrun does; say so instead of dropping
// them silently.
void AddStandaloneWarning(const LaunchOptions& o, std::vector<std::string>& warnings) {
  if (!o.standalone) return;
  std::string dropped;
  for (const char* name :
       {"--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--master-addr", "--master-port"}) {
    if (o.IsSet(name)) dropped += std::string(dropped.empty() ? "" : ", ") + name;
  }
  if (!dropped.empty()) {
    warnings.push_back("--standalone picks its own port and run id; ignoring " + dropped);
  }
}

void AddWarnings(const LaunchOptions& o, std::vector<std::string>& warnings) {
  if (o.rdzv_backend != "static" && o.rdzv_endpoint.empty() && o.IsSet("--master-addr")) {
    warnings.push_back(
        "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not "
        "specified.");
  }
}

LaunchOptions Resolve(const RawValues& raw, const EnvMap& env, const HostProbe& host,
                      std::vector<std::string>& warnings) {
  LaunchOptions o;
  RecordSources(raw, o);
  ResolveSizes(raw, env, host, o);
  ResolveRendezvous(raw, o);
  ResolveOutput(raw, o);
  ResolveWorkers(raw, env, o, warnings);
  CheckBackend(o);
  CheckNodeRank(o);
  AddWarnings(o, warnings);
  AddStandaloneWarning(o, warnings);
  return o;
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

int ParseResult::exit_code() const {
  switch (status) {
    case ParseStatus::kOk:
    case ParseStatus::kHelp:
      return 0;
    case ParseStatus::kUsageError:
      return 2;
    case ParseStatus::kValueError:
      return 1;
  }
  return 1;
}

HostProbe RealHostProbe() { return HostProbe{OnlineCpuCount, PhysicalGpuCount}; }

ParseResult ParseOptions(const std::vector<std::string>& argv, const EnvMap& env,
                         const HostProbe& host) {
  ParseResult result;
  try {
    RawValues raw;
    ReadEnvDefaults(env, raw);
    CommandLine cl = ReadCommandLine(argv, raw);
    if (cl.help) return {ParseStatus::kHelp, {}, HelpText(), {}};
    CheckEnvTypes(raw);
    if (!cl.script)
      Usage("the following arguments are required: training_script, training_script_args");
    if (!cl.unrecognized.empty()) Usage("unrecognized arguments: " + Joined(cl.unrecognized));
    result.options = Resolve(raw, env, host, result.warnings);
    result.options.training_script = std::move(*cl.script);
    result.options.training_script_args = std::move(cl.script_args);
  } catch (const Failure& failure) {
    result.status = failure.status;
    result.message = failure.message;
  }
  return result;
}

}  // namespace cpplaunch
