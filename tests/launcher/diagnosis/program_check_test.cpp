// Why a program could not be run: looked up as the spawn does.

#include "launcher/diagnosis/program_check.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace cpplaunch {
namespace {

TEST_CASE("CheckProgram: found, not executable, not found", "[agent][program_check]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("program_check_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "plain") << "data";
  std::ofstream(dir / "tool") << "#!/bin/sh\n";
  fs::permissions(dir / "tool", fs::perms::owner_all);
  fs::permissions(dir / "plain", fs::perms::owner_read | fs::perms::owner_write);
  CHECK(CheckProgram("tool", dir.string()) == ProgramCheck::kRunnable);
  CHECK(CheckProgram((dir / "plain").string(), std::nullopt) == ProgramCheck::kNotExecutable);
  CHECK(CheckProgram("plain", "/nonexistent:" + dir.string()) == ProgramCheck::kNotExecutable);
  CHECK(CheckProgram(dir.string(), std::nullopt) == ProgramCheck::kNotExecutable);  // a directory
  CHECK(CheckProgram("no-such-tool", dir.string()) == ProgramCheck::kNotFound);
  CHECK(CheckProgram((dir / "missing").string(), std::nullopt) == ProgramCheck::kNotFound);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cpplaunch
