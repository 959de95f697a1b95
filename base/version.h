#pragma once
// The program's version: the project's version from CMake's project() and, when built from a
// git checkout, `git describe` of that checkout. Defined in a translation unit generated at
// build time (cmake/write_version.cmake) into the cpplaunch_version library, which only the
// programs link: a new commit recompiles that one file and relinks the programs, nothing else.

#include <string>
#include <string_view>

namespace cpplaunch {

// "0.1.0".
std::string_view ProjectVersion();
// "532b0bf1c2d3", "v0.1.0-3-g532b0bf1c2d3-dirty"; empty when not built from a git checkout.
std::string_view SourceRevision();

// What --version prints: "cpplaunch 0.1.0 (git 532b0bf1c2d3)\n", or "cpplaunch 0.1.0\n"
// outside a checkout.
inline std::string VersionLine(std::string_view program) {
  std::string line = std::string(program) + " " + std::string(ProjectVersion());
  if (!SourceRevision().empty()) line += " (git " + std::string(SourceRevision()) + ")";
  return line + "\n";
}

}  // namespace cpplaunch
