// cpplaunch-install-files: writes the files `cmake --install` ships beside the programs that
// are built from the option table, so they cannot drift from `cpplaunch --help`:
//   cpplaunch-install-files VERSION OUTPUT_DIR
// writes OUTPUT_DIR/cpplaunch.1 (the man page), OUTPUT_DIR/cpplaunch.bash and
// OUTPUT_DIR/_cpplaunch (bash and zsh completion). A build-time tool, not installed.
// Exit status: 0, 2 for bad usage, 1 when a file cannot be written.

#include <cstdio>
#include <exception>
#include <string>

#include "base/atomic_file.h"
#include "base/exit_code.h"
#include "launcher/manual/man_page.h"
#include "launcher/manual/shell_completion.h"

int main(int argc, char** argv) {
  using namespace cpplaunch;
  if (argc != 3) {
    std::fprintf(stderr, "usage: cpplaunch-install-files VERSION OUTPUT_DIR\n");
    return ProcessExitCode(ExitCode::kUsage);
  }
  const std::string dir = argv[2];
  try {
    ReplaceFile(dir + "/cpplaunch.1", ManPage(argv[1]));
    ReplaceFile(dir + "/cpplaunch.bash", BashCompletion());
    ReplaceFile(dir + "/_cpplaunch", ZshCompletion());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpplaunch-install-files: %s\n", e.what());
    return ProcessExitCode(ExitCode::kFailure);
  }
  return ProcessExitCode(ExitCode::kSuccess);
}
