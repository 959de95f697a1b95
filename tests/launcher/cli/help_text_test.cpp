#include "launcher/cli/help_text.h"

#include <catch2/catch.hpp>

#include "launcher/cli/option_table.h"

namespace cpplaunch {
namespace {

TEST_CASE("help lists every option, dash spelling before the underscore alias") {
  const std::string help = HelpText();
  CHECK(help.starts_with(UsageLine() + "\n"));
  for (const OptionSpec& spec : OptionTable()) {
    INFO(spec.name);
    const size_t at = help.find(std::string(spec.name) + (spec.alias.empty() ? "" : ", "));
    CHECK(at != std::string::npos);
    if (!spec.alias.empty()) {
      CHECK(help.find(std::string(spec.name) + ", " + std::string(spec.alias)) !=
            std::string::npos);
    }
    if (spec.has_env) CHECK(help.find(EnvNameFor(spec)) != std::string::npos);
    CHECK(help.find(std::string(spec.help)) != std::string::npos);
  }
  CHECK(help.find("-r, --redirects VALUE") != std::string::npos);
  CHECK(help.find("-m, --module") != std::string::npos);
  CHECK(help.find("default: 29500") != std::string::npos);
  CHECK(help.find("exit status") != std::string::npos);
  CHECK(help.find("  2  the command line could not be parsed") != std::string::npos);
}

TEST_CASE("help names every --event-log-handler torchrun has, dynamic_rendezvous too") {
  const std::string help = HelpText();
  const size_t at = help.find("--event-log-handler");
  REQUIRE(at != std::string::npos);
  const std::string entry = help.substr(at, help.find("--role", at) - at);
  for (const char* handler : {"null", "console", "dynamic_rendezvous"}) {
    INFO(handler);
    CHECK(entry.find(handler) != std::string::npos);
  }
}

TEST_CASE("env names follow PET_<DEST>") {
  CHECK(EnvNameFor(SpecFor(OptionId::kNprocPerNode)) == "PET_NPROC_PER_NODE");
  CHECK(EnvNameFor(SpecFor(OptionId::kModule)) == "PET_MODULE");
  CHECK(EnvNameFor(SpecFor(OptionId::kRedirects)) == "PET_REDIRECTS");
  CHECK(EnvNameFor(SpecFor(OptionId::kRdzvBackend)) == "PET_RDZV_BACKEND");
  CHECK_FALSE(SpecFor(OptionId::kLogsSpecs).has_env);
  CHECK_FALSE(SpecFor(OptionId::kNumaBinding).has_env);
}

}  // namespace
}  // namespace cpplaunch

namespace cpplaunch {
namespace {

TEST_CASE("help fits an 80-column terminal") {
  const std::string help = HelpText();
  size_t start = 0;
  while (start < help.size()) {
    const size_t end = help.find('\n', start);
    const std::string line = help.substr(start, end - start);
    INFO(line);
    CHECK(line.size() <= 80);
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

}  // namespace
}  // namespace cpplaunch
