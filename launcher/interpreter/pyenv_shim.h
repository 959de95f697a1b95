#pragma once
// pyenv's shims are bash scripts that ask pyenv which version to run: PYENV_VERSION, else the
// nearest .python-version, else $PYENV_ROOT/version. Starting one to ask costs a bash and
// a pyenv start; the launcher reads the same files instead (python_probe.cpp). Pure;
// thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

// PYENV_ROOT as a shim sets it (`export PYENV_ROOT="/root/.pyenv"`), or nullopt when `script`
// is not a pyenv shim (it must also `exec` pyenv's libexec).
std::optional<std::string> PyenvShimRoot(std::string_view script);

// The version names of a version file (whitespace-separated, `#` comments) or of
// PYENV_VERSION (':'-separated): "3.11.7", "system", ...
std::vector<std::string> PyenvVersionNames(std::string_view text);

}  // namespace cpplaunch
