#include "launcher/interpreter/python_probe.h"

#include <fstream>

#include "launcher/interpreter/pyenv_shim.h"

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The version pyenv runs: PYENV_VERSION, else the nearest .python-version from `dir` upward,
// else the global version file; "system" when none says.
std::vector<std::string> PyenvVersions(const fs::path& root, const ProbeInputs& in) {
  if (in.pyenv_version && !in.pyenv_version->empty()) return PyenvVersionNames(*in.pyenv_version);
  for (fs::path dir = in.pyenv_dir; !dir.empty(); dir = dir.parent_path()) {
    const fs::path file = dir / ".python-version";
    if (IsFile(file)) return PyenvVersionNames(ReadHead(file, 4096));
    if (dir == dir.root_path()) break;
  }
  if (IsFile(root / "version")) return PyenvVersionNames(ReadHead(root / "version", 4096));
  return {"system"};
}

// The file a pyenv shim would run, or nullopt (pyenv's "system", a version not installed):
// the first listed version that has the program, as `pyenv exec` picks it.
std::optional<fs::path> PyenvTarget(const fs::path& root, const std::string& program,
                                    const ProbeInputs& in, std::string& version) {
  for (const std::string& name : PyenvVersions(root, in)) {
    if (name == "system") return std::nullopt;
    fs::path candidate = root / "versions" / name / "bin" / program;
    if (IsFile(candidate)) {
      version = name;
      return candidate;
    }
  }
  return std::nullopt;
}

std::optional<PythonLayout> ReadLayout(const fs::path& program) {
  std::error_code ec;
  const fs::path real = fs::canonical(program, ec);
  if (ec) return std::nullopt;
  PythonLayout layout;
  layout.prefix = real.parent_path().parent_path();
  layout.version = VersionFromName(real.filename().string());
  const fs::path venv = program.parent_path().parent_path();
  if (IsFile(venv / "pyvenv.cfg")) {
    const VenvConfig config = ParseVenvConfig(ReadHead(venv / "pyvenv.cfg", 16384));
    layout.venv = venv;
    layout.venv_system_site = config.system_site_packages;
    // A venv made with --copies has its own binary: the base is where `home` says.
    if (!config.home.empty()) layout.prefix = fs::path(config.home).parent_path();
    if (layout.version.empty()) layout.version = config.version;
  }
  if (layout.version.empty()) layout.version = VersionFromName(program.filename().string());
  if (layout.version.empty() || !IsDir(layout.prefix / "lib" / ("python" + layout.version))) {
    return std::nullopt;
  }
  return layout;
}

bool HasModule(const std::vector<fs::path>& dirs, const std::string& module) {
  for (const fs::path& dir : dirs) {
    if (IsDir(dir / module) || IsFile(dir / (module + ".py"))) return true;
  }
  return false;
}

}  // namespace

std::string ReadHead(const fs::path& file, std::size_t count) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  std::string head(count, '\0');
  in.read(head.data(), static_cast<std::streamsize>(count));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

PythonFacts ProbePython(const fs::path& program, const ProbeInputs& inputs) {
  PythonFacts facts;
  facts.program = facts.shown = program.string();
  fs::path target = program;
  const std::string head = ReadHead(program, 1024);
  if (head.starts_with("#!")) {
    const auto root = PyenvShimRoot(head);
    if (!root) return facts;
    std::string version;
    const auto found = PyenvTarget(*root, program.filename().string(), inputs, version);
    if (!found) return facts;
    target = *found;
    facts.shown += " (pyenv " + version + ")";
  }
  const auto layout = ReadLayout(target);
  if (!layout) return facts;
  const auto dirs = ModuleSearchDirs(*layout, inputs.search);
  for (const std::string& module : inputs.modules) {
    if (!HasModule(dirs, module)) {
      facts.modules = PythonFacts::Modules::kMissing;
      facts.missing = module;
      return facts;
    }
  }
  facts.modules = PythonFacts::Modules::kAll;
  return facts;
}

}  // namespace cpplaunch
