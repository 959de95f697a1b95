#include "launcher/cli/script_check.h"

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
  auto problem = ScriptProblem(Options({elf.path}));
  REQUIRE(problem);
  CHECK(*problem == elf.path +
                        " is a compiled program, not a Python script: add --no-python to run "
                        "it directly");
}

TEST_CASE("no problem: a Python script, --no-python, -m, a short or missing file") {
  TempFile script("print('hi')\n");
  CHECK_FALSE(ScriptProblem(Options({script.path})));
  TempFile elf(
      std::string("\x7f"
                  "ELF\x02",
                  5));
  CHECK_FALSE(ScriptProblem(Options({"--no-python", elf.path})));
  CHECK_FALSE(ScriptProblem(Options({"-m", elf.path})));
  TempFile short_file("\x7f");
  CHECK_FALSE(ScriptProblem(Options({short_file.path})));
  CHECK_FALSE(ScriptProblem(Options({"/nonexistent/train.py"})));
}

}  // namespace
}  // namespace cpplaunch
