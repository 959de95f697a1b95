#include "launcher/interpreter/python_layout.h"

#include "base/text.h"

namespace cpplaunch {
namespace {

// "3.11" from "3.11.2" (or "3.11").
std::string MajorMinor(std::string_view full) {
  const auto first = full.find('.');
  if (first == std::string_view::npos) return "";
  const auto second = full.find('.', first + 1);
  return std::string(full.substr(0, second));
}

void AddSitePackages(std::vector<std::filesystem::path>& dirs, const std::filesystem::path& prefix,
                     const std::string& lib) {
  dirs.push_back(prefix / "lib" / lib / "site-packages");
}

// The base installation's site dirs; Debian's python3 adds its dist-packages (site.py as
// patched by Debian), which is where python3-torch lives.
void AddBaseSites(std::vector<std::filesystem::path>& dirs, const std::filesystem::path& prefix,
                  const std::string& lib) {
  dirs.push_back(prefix / "local" / "lib" / lib / "dist-packages");
  dirs.push_back(prefix / "lib" / "python3" / "dist-packages");
  dirs.push_back(prefix / "lib" / lib / "dist-packages");
  AddSitePackages(dirs, prefix, lib);
}

}  // namespace

VenvConfig ParseVenvConfig(std::string_view text) {
  VenvConfig config;
  for (std::string_view line : Split(text, '\n')) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = Strip(line.substr(0, eq));
    const std::string_view value = Strip(line.substr(eq + 1));
    if (key == "home") {
      config.home = std::string(value);
    } else if (key == "include-system-site-packages") {
      config.system_site_packages = value == "true" || value == "True";
    } else if ((key == "version" || key == "version_info") && config.version.empty()) {
      config.version = MajorMinor(value);
    }
  }
  return config;
}

std::string VersionFromName(std::string_view file_name) {
  constexpr std::string_view kPython = "python";
  if (!file_name.starts_with(kPython)) return "";
  const std::string_view rest = file_name.substr(kPython.size());
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return "";
  for (char c : rest) {
    if (c != '.' && (c < '0' || c > '9')) return "";
  }
  return std::string(rest);
}

std::vector<std::filesystem::path> ModuleSearchDirs(const PythonLayout& layout,
                                                    const SearchEnv& env) {
  std::vector<std::filesystem::path> dirs;
  if (!env.first.empty()) dirs.push_back(env.first);
  if (env.pythonpath) {
    for (std::string_view entry : Split(*env.pythonpath, ':')) {
      if (!entry.empty()) dirs.emplace_back(entry);
    }
  }
  const std::string lib = "python" + layout.version;
  dirs.push_back(layout.prefix / "lib" / lib);
  dirs.push_back(layout.prefix / "lib" / lib / "lib-dynload");
  if (layout.venv) AddSitePackages(dirs, *layout.venv, lib);
  // A venv turns the user site off; the base's site dirs only with system site packages.
  if (!layout.venv && !env.no_user_site && env.home && !env.home->empty()) {
    dirs.push_back(std::filesystem::path(*env.home) / ".local" / "lib" / lib / "site-packages");
  }
  if (!layout.venv || layout.venv_system_site) AddBaseSites(dirs, layout.prefix, lib);
  return dirs;
}

std::string TopLevelModule(std::string_view module) {
  return std::string(module.substr(0, module.find('.')));
}

}  // namespace cpplaunch
