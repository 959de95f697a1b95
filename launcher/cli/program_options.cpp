#include "launcher/cli/program_options.h"

#include <map>

namespace cpplaunch {
namespace po = boost::program_options;
namespace {

// "nproc-per-node,nproc_per_node" or "redirects,r": Program_options takes a one-letter last
// name as the short option and every other name as a long one.
std::string NamesOf(const OptionSpec& spec) {
  std::string names = KeyOf(spec);
  if (!spec.alias.empty()) names += "," + std::string(spec.alias.substr(2));
  if (!spec.short_name.empty()) names += "," + std::string(spec.short_name.substr(1));
  return names;
}

// Values stay text: argparse's int/float/choice checks (option_value.h) need Python's
// number syntax and argparse's wording, and must run in command-line order, which
// Program_options' typed values (lexical_cast at store time) cannot give.
const po::value_semantic* SemanticOf(const OptionSpec& spec) {
  const bool takes_value = TakesValue(spec);
  return new po::untyped_value(/*zero_tokens=*/!takes_value);
}

po::options_description Build() {
  po::options_description description;
  for (const OptionSpec& spec : OptionTable()) {
    const std::string names = NamesOf(spec);
    const std::string help(spec.help);
    // Takes ownership of the semantic and copies the names and the help.
    description.add_options()(names.c_str(), SemanticOf(spec), help.c_str());
  }
  return description;
}

}  // namespace

const po::options_description& OptionDescriptions() {
  static const po::options_description description = Build();
  return description;
}

std::string KeyOf(const OptionSpec& spec) { return std::string(spec.name.substr(2)); }

const OptionSpec& SpecForKey(const std::string& key) {
  static const std::map<std::string, const OptionSpec*> by_key = [] {
    std::map<std::string, const OptionSpec*> map;
    for (const OptionSpec& spec : OptionTable()) map[KeyOf(spec)] = &spec;
    return map;
  }();
  return *by_key.at(key);
}

}  // namespace cpplaunch
