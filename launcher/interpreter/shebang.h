#pragma once
// The interpreter a script's `#!` line runs: the drop-in `torchrun` runs its workers with the
// Python of the `torchrun` it shadows, as that one runs them with its own sys.executable.
// Pure; thread-safe.

#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// From the first bytes of a script:
//   "#!/usr/bin/python3.11"               -> "/usr/bin/python3.11"
//   "#!/usr/bin/env python3"               -> "python3" (a name: PATH decides)
//   "#!/bin/sh\n'''exec' /venv/bin/python3 ..." -> "/venv/bin/python3" (pip's form for a path
//                                              too long for a #! line)
// nullopt when there is no #! line, or when it runs something else (a shell script).
std::optional<std::string> ShebangInterpreter(std::string_view head);

}  // namespace cpplaunch
