#include "launcher/cli/argv_split.h"

#include <algorithm>
#include <boost/program_options/errors.hpp>
#include <string_view>

#include "base/text.h"
#include "launcher/cli/option_table.h"
#include "launcher/cli/parse_failure.h"
#include "launcher/cli/program_options.h"

namespace cpplaunch {
namespace {

namespace po = boost::program_options;

struct Match {
  const OptionSpec* spec = nullptr;
  bool is_short = false;                      // the word has one dash: "-r3", "-mr3"
  std::optional<std::string> explicit_value;  // from "--opt=v", "-r3", "-r=3"
  bool after_equals = false;                  // explicit_value followed an '=' in the word
};

enum class WordKind { kPositional, kOption, kUnknownOption, kEndOfOptions };

struct Word {
  WordKind kind = WordKind::kPositional;
  Match match;
};

// Program_options' lookup (exact names first, then a unique prefix of a long name; both
// spellings of one option are one candidate). Throws po::ambiguous_option.
const OptionSpec* Find(const std::string& name) {
  const po::option_description* found = OptionDescriptions().find_nothrow(name, /*approx=*/true);
  return found ? &SpecForKey(found->key(name)) : nullptr;
}

std::optional<Match> MatchLong(std::string_view word) {
  const size_t eq = word.find('=');
  const std::string name(word.substr(2, eq == std::string_view::npos ? eq : eq - 2));
  // "---m" would reach the short option -m through Program_options' lookup; argparse
  // matches nothing.
  if (name.starts_with('-')) return std::nullopt;
  const OptionSpec* spec = Find(name);
  if (!spec) return std::nullopt;
  if (eq == std::string_view::npos) return Match{spec, false, std::nullopt, false};
  return Match{spec, false, std::string(word.substr(eq + 1)), true};
}

// argparse takes "-r", "-r=3" and "-r3" (or "-mr3", a cluster) for the short option -r.
std::optional<Match> MatchShort(std::string_view word) {
  const OptionSpec* spec = Find(std::string(word.substr(0, 2)));
  if (!spec) return std::nullopt;
  if (word.size() == 2) return Match{spec, true, std::nullopt, false};
  if (word[2] == '=') return Match{spec, true, std::string(word.substr(3)), true};
  return Match{spec, true, std::string(word.substr(2)), false};
}

// argparse's _negative_number_matcher: such words are values and positionals, not options.
bool LooksLikeNegativeNumber(std::string_view s) {
  if (s.size() < 2 || s[0] != '-') return false;
  s.remove_prefix(1);
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos) return std::all_of(s.begin(), s.end(), IsDigit);
  const std::string_view whole = s.substr(0, dot), frac = s.substr(dot + 1);
  return !frac.empty() && std::all_of(whole.begin(), whole.end(), IsDigit) &&
         std::all_of(frac.begin(), frac.end(), IsDigit);
}

// argparse lists every matching spelling; Program_options' ambiguous_option names only the
// first spelling of each option and words its message differently.
std::string AmbiguityMessage(std::string_view word) {
  const std::string_view prefix = word.substr(0, word.find('='));
  std::vector<std::string> candidates;
  for (const OptionSpec& spec : OptionTable()) {
    for (std::string_view s : {spec.name, spec.alias}) {
      if (!s.empty() && s.starts_with(prefix)) candidates.emplace_back(s);
    }
  }
  return "ambiguous option: " + std::string(word) + " could match " + Join(candidates, ", ");
}

// argparse's _parse_optional: what one word is.
Word ClassifyUnchecked(std::string_view word) {
  if (word.size() < 2 || word[0] != '-') return {WordKind::kPositional, {}};
  if (word == "--") return {WordKind::kEndOfOptions, {}};
  const std::optional<Match> match = word[1] == '-' ? MatchLong(word) : MatchShort(word);
  if (match) return {WordKind::kOption, *match};
  // argparse also takes a word with a space for a positional ("-x y=1" as a value).
  if (LooksLikeNegativeNumber(word) || word.find(' ') != std::string_view::npos) {
    return {WordKind::kPositional, {}};
  }
  return {WordKind::kUnknownOption, {}};
}

Word Classify(std::string_view word) {
  try {
    return ClassifyUnchecked(word);
  } catch (const po::ambiguous_option&) {
    UsageError(AmbiguityMessage(word));
  }
}

bool IsFlag(const OptionSpec& spec) { return !TakesValue(spec); }

// "-mr3": after the flag -m, "r3" names the next short option (-r) and its glued value.
// argparse refuses any other text after a flag ("-mx", "-m=1", "--standalone=1");
// Program_options would read "-mx" as an unknown -x and "-m=1" as an option "-=".
Match NextInCluster(const Match& flag) {
  const std::string& rest = *flag.explicit_value;
  const OptionSpec* next = nullptr;
  if (flag.is_short && !rest.empty()) next = Find("-" + rest.substr(0, 1));
  if (!next) {
    UsageError("argument " + DisplayName(*flag.spec) + ": ignored explicit argument " +
               Quote(rest));
  }
  Match match{next, true, std::nullopt, false};
  if (rest.size() > 1) match.explicit_value = rest.substr(1);
  return match;
}

// The word as Program_options should see it. It reads "-r3", "-mr3" and "--opt=v" as
// argparse does, but "-r=3" as the value "=3", and refuses "--opt=" (empty_adjacent_parameter)
// where argparse takes the empty value.
std::vector<std::string> WordsFor(const std::string& word, const Match& match) {
  if (!match.after_equals) return {word};
  const std::string long_name = "--" + KeyOf(*match.spec);
  if (match.explicit_value->empty()) return {long_name, ""};
  if (match.is_short) return {long_name + "=" + *match.explicit_value};
  return {word};
}

class Splitter {
 public:
  explicit Splitter(const std::vector<std::string>& argv) : argv_(argv) {}

  ArgvSplit Run() {
    try {
      while (i_ < argv_.size() && !split_.script && !split_.help && !split_.version) Step();
    } catch (const ParseFailure& failure) {
      split_.error = failure.message;
    }
    if (split_.script)
      split_.script_args.assign(argv_.begin() + static_cast<long>(i_), argv_.end());
    return std::move(split_);
  }

 private:
  void Step() {
    const Word word = Classify(argv_[i_]);
    switch (word.kind) {
      case WordKind::kEndOfOptions:
        ++i_;
        if (i_ < argv_.size()) split_.script = argv_[i_++];
        break;
      case WordKind::kPositional:
        split_.script = argv_[i_++];
        break;
      case WordKind::kUnknownOption:
        split_.unrecognized.push_back(argv_[i_++]);
        break;
      case WordKind::kOption:
        ConsumeOption(word.match);
        break;
    }
  }

  void ConsumeOption(Match match) {
    const std::string& word = argv_[i_];
    while (IsFlag(*match.spec)) {
      if (match.spec->kind == ValueKind::kHelp) {
        split_.help = true;  // argparse prints the help at once, whatever follows
        return;
      }
      if (match.spec->kind == ValueKind::kVersion && !match.explicit_value) {
        split_.version = true;  // as argparse's version action: at once, whatever follows
        return;
      }
      if (!match.explicit_value) return Emit({word}, 1);
      match = NextInCluster(match);
    }
    if (match.explicit_value) return Emit(WordsFor(word, match), 1);
    // argparse will not take an option-like word as a separate value (Program_options would
    // take "-x" if no option has that name).
    if (i_ + 1 < argv_.size() && Classify(argv_[i_ + 1]).kind == WordKind::kPositional) {
      return Emit({word, argv_[i_ + 1]}, 2);
    }
    UsageError("argument " + DisplayName(*match.spec) + ": expected one argument");
  }

  void Emit(const std::vector<std::string>& words, size_t consumed) {
    split_.option_words.insert(split_.option_words.end(), words.begin(), words.end());
    i_ += consumed;
  }

  const std::vector<std::string>& argv_;
  size_t i_ = 0;
  ArgvSplit split_;
};

}  // namespace

ArgvSplit SplitAtScript(const std::vector<std::string>& argv) { return Splitter(argv).Run(); }

}  // namespace cpplaunch
