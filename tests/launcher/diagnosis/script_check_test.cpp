#include "launcher/diagnosis/script_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "parsed_options.h"

namespace cpplaunch {
namespace {

LaunchOptions Options(const std::vector<std::string>& argv) { return ParsedOptions(argv); }

// A file in a fresh temporary directory, removed with it.
struct TempFile {
  std::string dir, path;
  explicit TempFile(const std::string& bytes) {
    char pattern[] = "/tmp/script_check_XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    dir = pattern;
    path = dir + "/train.py";
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() {
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }
};

TEST_CASE("a compiled program without --no-python is named, with the fix") {
  TempFile elf(
      std::string("\x7f"
                  "ELF\x02\x01\x01",
                  7));
  auto problem = ScriptProblem(Options({elf.path}), "/usr/bin:/bin");
  REQUIRE(problem);
  CHECK(*problem == elf.path +
                        " is a compiled program, not a Python script: add --no-python to run "
                        "it directly");
}

constexpr const char* kPath = "/usr/bin:/bin";

TEST_CASE("no problem: a Python script, an executable with --no-python, -m, a short file") {
  TempFile script("print('hi')\n");
  CHECK_FALSE(ScriptProblem(Options({script.path}), kPath));
  TempFile elf(
      std::string("\x7f"
                  "ELF\x02",
                  5));
  ::chmod(elf.path.c_str(), 0700);
  CHECK_FALSE(ScriptProblem(Options({"--no-python", elf.path}), kPath));
  CHECK_FALSE(ScriptProblem(Options({"--no-python", "true"}), kPath));  // found on PATH
  CHECK_FALSE(ScriptProblem(Options({"-m", "no_such_module"}), kPath));
  TempFile short_file("\x7f");
  CHECK_FALSE(ScriptProblem(Options({short_file.path}), kPath));
}

TEST_CASE("a missing script is named before any worker starts") {
  auto problem = ScriptProblem(Options({"/nonexistent/train.py"}), kPath);
  REQUIRE(problem);
  CHECK(problem->find("the training script /nonexistent/train.py does not exist") == 0);
}

TEST_CASE("with --no-python, a program that is missing, not on PATH, or not executable") {
  auto missing = ScriptProblem(Options({"--no-python", "/nonexistent/trainer"}), kPath);
  REQUIRE(missing);
  CHECK(missing->find("cannot run /nonexistent/trainer: No such file") == 0);
  auto not_on_path = ScriptProblem(Options({"--no-python", "no-such-trainer-xyz"}), kPath);
  REQUIRE(not_on_path);
  CHECK(not_on_path->find("no such program on PATH") != std::string::npos);
  TempFile plain("#!/bin/sh\n");
  ::chmod(plain.path.c_str(), 0600);
  auto not_executable = ScriptProblem(Options({"--no-python", plain.path}), kPath);
  REQUIRE(not_executable);
  CHECK(*not_executable == "cannot run " + plain.path + ": " + plain.path +
                               " is not executable (chmod +x it, or drop --no-python to run it "
                               "with python)");
}

}  // namespace
}  // namespace cpplaunch
