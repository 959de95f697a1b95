#include "launcher/cli/pet_env.h"

#include <map>

#include "launcher/cli/option_table.h"
#include "launcher/cli/program_options.h"

namespace cpplaunch {
namespace po = boost::program_options;

std::string PetNameMapper(const std::string& env_name) {
  static const std::map<std::string, std::string> keys = [] {
    std::map<std::string, std::string> map;
    for (const OptionSpec& spec : OptionTable()) {
      if (spec.has_env) map[EnvNameFor(spec)] = KeyOf(spec);
    }
    return map;
  }();
  auto it = keys.find(env_name);
  return it == keys.end() ? std::string() : it->second;
}

// The body of po::parse_environment, which reads only the global environ.
po::parsed_options ParsePetEnvironment(const EnvMap& env) {
  po::parsed_options parsed(&OptionDescriptions());
  for (const auto& [name, value] : env) {
    std::string key = PetNameMapper(name);
    if (key.empty()) continue;
    po::option option;
    option.string_key = std::move(key);
    option.value.push_back(value);
    parsed.options.push_back(std::move(option));
  }
  return parsed;
}

}  // namespace cpplaunch
