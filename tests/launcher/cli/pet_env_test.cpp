#include "launcher/cli/pet_env.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("the PET_ name mapper gives the option's key, or nothing") {
  CHECK(PetNameMapper("PET_NPROC_PER_NODE") == "nproc-per-node");
  CHECK(PetNameMapper("PET_STANDALONE") == "standalone");
  CHECK(PetNameMapper("PET_NNODES") == "nnodes");
  CHECK(PetNameMapper("PET_LOGS_SPECS").empty());    // the option has no variable
  CHECK(PetNameMapper("PET_NUMA_BINDING").empty());  // the option has no variable
  CHECK(PetNameMapper("PET_HELP").empty());
  CHECK(PetNameMapper("NPROC_PER_NODE").empty());
  CHECK(PetNameMapper("pet_nnodes").empty());
}

TEST_CASE("the PET_ environment becomes Program_options' parsed options, text unchecked") {
  const EnvMap env{{"HOME", "/root"}, {"PET_NNODES", "1:2"}, {"PET_MAX_RESTARTS", "many"}};
  const auto parsed = ParsePetEnvironment(env);
  REQUIRE(parsed.options.size() == 2);
  CHECK(parsed.options[0].string_key == "max-restarts");
  CHECK(parsed.options[0].value == std::vector<std::string>{"many"});
  CHECK(parsed.options[1].string_key == "nnodes");
  CHECK(parsed.options[1].value == std::vector<std::string>{"1:2"});
}

}  // namespace
}  // namespace cpplaunch
