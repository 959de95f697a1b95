#pragma once
// The options of a command line a test knows to be valid, parsed as main parses them but on a
// fixed host (8 CPUs, no GPU), so that no test depends on the machine it runs on.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "launcher/cli/options.h"

namespace cpplaunch {

inline LaunchOptions ParsedOptions(const std::vector<std::string>& argv) {
  ParseResult parsed = ParseOptions(argv, EnvMap{}, HostProbe{[] { return 8; }, [] { return 0; }});
  INFO(parsed.message);
  REQUIRE(parsed.ok());
  return parsed.options;
}

}  // namespace cpplaunch
