#pragma once
// Where a Python installation looks for modules, worked out from its files without starting it
// (a Python start costs tens of milliseconds; this costs a few file checks). It follows what
// CPython's `site` module does on Linux: the stdlib under sys.base_prefix, a venv's
// site-packages (and the base's too with include-system-site-packages), Debian's dist-packages,
// the user site, and PYTHONPATH first. Pure; thread-safe.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

// The two keys of a venv's pyvenv.cfg that decide its search path.
struct VenvConfig {
  std::string home;                   // the base interpreter's bin directory
  bool system_site_packages = false;  // include-system-site-packages = true
  std::string version;                // "3.11" from `version = 3.11.2` (or version_info), or ""
};

VenvConfig ParseVenvConfig(std::string_view text);

// "3.11" from an interpreter's file name ("python3.11"), or "" ("python3", "pypy").
std::string VersionFromName(std::string_view file_name);

struct PythonLayout {
  std::filesystem::path prefix;               // sys.base_prefix: the parent of the real bin/
  std::string version;                        // "3.11"
  std::optional<std::filesystem::path> venv;  // the venv's directory (where pyvenv.cfg is)
  bool venv_system_site = false;
};

// What of the environment Python's search path depends on.
struct SearchEnv {
  std::optional<std::string> pythonpath;  // PYTHONPATH
  std::optional<std::string> home;        // HOME, for the user site
  bool no_user_site = false;              // PYTHONNOUSERSITE set and not empty
  std::filesystem::path first;            // sys.path[0]: the script's directory, or the cwd (-m)
};

// The directories a top-level module is looked for in, in Python's order.
std::vector<std::filesystem::path> ModuleSearchDirs(const PythonLayout& layout,
                                                    const SearchEnv& env);

// "torch" from "torch.distributed.run".
std::string TopLevelModule(std::string_view module);

}  // namespace cpplaunch
