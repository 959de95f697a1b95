#include "launcher/cli/program_options.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("every row of the option table is one Program_options option with all its names") {
  const auto& description = OptionDescriptions();
  CHECK(description.options().size() == OptionTable().size());
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    const auto* by_name = description.find_nothrow(KeyOf(spec), false);
    REQUIRE(by_name);
    CHECK(&SpecForKey(by_name->key("")) == &spec);
    if (!spec.alias.empty()) {
      CHECK(description.find_nothrow(std::string(spec.alias.substr(2)), false) == by_name);
    }
    if (!spec.short_name.empty()) {
      CHECK(description.find_nothrow(std::string(spec.short_name), false) == by_name);
    }
    CHECK(by_name->semantic()->max_tokens() == (TakesValue(spec) ? 1u : 0u));
  }
}

TEST_CASE("a prefix of both spellings of one option is not ambiguous") {
  const auto* found = OptionDescriptions().find_nothrow("nproc", true);
  REQUIRE(found);
  CHECK(found->key("nproc") == "nproc-per-node");
}

}  // namespace
}  // namespace cpplaunch
