#pragma once
// Where torchrun's command line ends and the training script begins, found before
// Program_options parses anything: the first positional word is the script, and it and
// every word after it are the script's, passed on untouched (argparse's REMAINDER).
//
// Finding that word needs argparse's reading of each word (which words are options, which
// option takes the next word as its value), so the rules Program_options does not share
// live here too, each with its reason (argv_split.cpp). Names are resolved through
// Program_options' own lookup (OptionDescriptions), so both spellings and unique prefixes
// behave the same here and in the parse.

#include <optional>
#include <string>
#include <vector>

namespace cpplaunch {

struct ArgvSplit {
  // The option words before the script (or before -h or an error), for Program_options;
  // rewritten only where Program_options would read argparse's form differently.
  std::vector<std::string> option_words;
  std::vector<std::string> unrecognized;  // option-like words that match no option, in order
  bool help = false;                      // -h/--help came before the script
  bool version = false;                   // --version came before the script (and any -h)
  // argparse's usage error at the word where reading stopped; errors in option_words (value
  // types) come first, as argparse meets them first.
  std::optional<std::string> error;
  std::optional<std::string> script;
  std::vector<std::string> script_args;
};

// argv without argv[0].
ArgvSplit SplitAtScript(const std::vector<std::string>& argv);

}  // namespace cpplaunch
