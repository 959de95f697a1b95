#include "launcher/interpreter/worker_python.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <vector>

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

// Interpreters laid out as they are installed, without being real programs: the choice reads
// files and never starts one.
class FakePythons {
 public:
  FakePythons()
      : root_(fs::temp_directory_path() / ("worker_python_" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
    // An installation with torch (Debian's), one without, a venv of each kind over the first.
    Install("sys", "dist-packages");
    fs::create_directories(root_ / "sys/lib/python3/dist-packages/torch");
    fs::create_directories(root_ / "sys/lib/python3/dist-packages/pytest");
    Install("bare", "site-packages");
    Venv("venv", false);
    Venv("venv_system", true);
    // pyenv: a shim dir, a version without torch, the global version file.
    const fs::path pyenv = root_ / "pyenv";
    Executable(pyenv / "shims/python3", "#!/usr/bin/env bash\nset -e\nexport PYENV_ROOT=\"" +
                                            pyenv.string() + "\"\nexec \"" + pyenv.string() +
                                            "/libexec/pyenv\" exec \"$program\" \"$@\"\n");
    Install("pyenv/versions/3.11.7", "site-packages");
    Write(pyenv / "version", "3.11.7\n");
    // The torchrun a drop-in shadows, and the drop-in itself (a link to "this program").
    Executable(root_ / "torch_bin/torchrun",
               "#!" + (root_ / "sys/bin/python3.11").string() + "\nimport sys\n");
    Executable(root_ / "cpplaunch",
               "\x7f"
               "ELF");
    fs::create_directories(root_ / "dropin");
    fs::create_symlink(root_ / "cpplaunch", root_ / "dropin/torchrun");
    fs::create_directories(root_ / "empty_system_bin");
  }
  ~FakePythons() { fs::remove_all(root_); }

  fs::path operator/(const std::string& sub) const { return root_ / sub; }

  std::optional<PythonChoice> Choose(const std::string& path, PythonQuery query = {},
                                     EnvMap env = {}) const {
    env["PATH"] = path;
    env["HOME"] = (root_ / "home").string();
    if (query.argv0.empty()) query.argv0 = "cpplaunch";
    if (query.script.empty()) query.script = "train.py";
    query.cwd = root_;
    query.self = root_ / "cpplaunch";
    query.system_bin = root_ / "empty_system_bin";
    return ChooseWorkerPython(query, env);
  }

 private:
  static void Write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  static void Executable(const fs::path& file, const std::string& text) {
    Write(file, text);
    fs::permissions(file, fs::perms::owner_all);
  }
  void Install(const std::string& prefix, const std::string& site) {
    const fs::path p = root_ / prefix;
    Executable(p / "bin/python3.11",
               "\x7f"
               "ELF");
    fs::create_symlink("python3.11", p / "bin/python3");
    fs::create_directories(p / "lib/python3.11" / site);
  }
  void Venv(const std::string& name, bool system_site) {
    const fs::path v = root_ / name;
    fs::create_directories(v / "bin");
    fs::create_symlink(root_ / "sys/bin/python3.11", v / "bin/python3");
    fs::create_directories(v / "lib/python3.11/site-packages");
    Write(v / "pyvenv.cfg", "home = " + (root_ / "sys/bin").string() +
                                "\ninclude-system-site-packages = " +
                                (system_site ? "true" : "false") + "\nversion = 3.11.2\n");
  }

  fs::path root_;
};

std::string Bin(const FakePythons& f, const std::string& prefix) {
  return (f / prefix / "bin").string();
}

TEST_CASE("a python3 with torch first on PATH is kept without a word") {
  FakePythons f;
  CHECK_FALSE(f.Choose(Bin(f, "sys") + ":" + Bin(f, "bare")));
  CHECK_FALSE(f.Choose(Bin(f, "venv_system") + ":" + Bin(f, "sys")));
}

TEST_CASE("a venv or pyenv python3 without torch first on PATH: the next one with torch") {
  FakePythons f;
  for (const std::string& first : {Bin(f, "venv"), Bin(f, "bare"), (f / "pyenv/shims").string()}) {
    CAPTURE(first);
    const auto choice = f.Choose(first + ":" + Bin(f, "sys"));
    REQUIRE(choice);
    CHECK(choice->program == Bin(f, "sys") + "/python3");
    CHECK(choice->note.starts_with("the workers run " + Bin(f, "sys") +
                                   "/python3: the python3 on PATH, "));
    CHECK(choice->note.ends_with("has no module 'torch' (PYTHON_EXEC chooses another)"));
  }
  CHECK(f.Choose(f.operator/("pyenv/shims").string() + ":" + Bin(f, "sys"))
            ->note.find("/shims/python3 (pyenv 3.11.7), has no module 'torch'") !=
        std::string::npos);
}

TEST_CASE("without another python3 that has torch python3 from PATH stays") {
  FakePythons f;
  CHECK_FALSE(f.Choose(Bin(f, "venv") + ":" + Bin(f, "bare")));
}

TEST_CASE("pyenv's version comes from PYENV_VERSION then .python-version then its file") {
  FakePythons f;
  const std::string path = f.operator/("pyenv/shims").string() + ":" + Bin(f, "sys");
  // "system" is the next python3 on PATH: not known here, so kept.
  CHECK_FALSE(f.Choose(path, {}, EnvMap{{"PYENV_VERSION", "system"}}));
  std::ofstream(f / ".python-version") << "system\n";
  CHECK_FALSE(f.Choose(path));
  fs::remove(f / ".python-version");
  CHECK(f.Choose(path));
}

TEST_CASE("python -m: the module must be there too") {
  FakePythons f;
  PythonQuery query;
  query.module = true;
  query.script = "pytest";
  // sys has torch and pytest; venv_system sees them through the system site packages.
  CHECK_FALSE(f.Choose(Bin(f, "venv_system") + ":" + Bin(f, "bare"), query));
  query.script = "no_such_runner";
  CHECK_FALSE(f.Choose(Bin(f, "sys") + ":" + Bin(f, "bare"), query));
  query.script = "pytest";
  const auto choice = f.Choose(Bin(f, "bare") + ":" + Bin(f, "sys"), query);
  REQUIRE(choice);
  CHECK(choice->program == Bin(f, "sys") + "/python3");
}

TEST_CASE("PYTHON_EXEC or --no-python: nothing to choose") {
  FakePythons f;
  const std::string path = Bin(f, "venv") + ":" + Bin(f, "sys");
  CHECK_FALSE(f.Choose(path, {}, EnvMap{{"PYTHON_EXEC", "/opt/python3"}}));
  PythonQuery no_python;
  no_python.no_python = true;
  CHECK_FALSE(f.Choose(path, no_python));
}

TEST_CASE("the drop-in torchrun runs the interpreter of the torchrun it shadows") {
  FakePythons f;
  PythonQuery dropin;
  dropin.argv0 = "torchrun";
  const std::string shadowed = (f / "torch_bin/torchrun").string();
  const auto choice = f.Choose(
      (f / "dropin").string() + ":" + Bin(f, "venv") + ":" + (f / "torch_bin").string(), dropin);
  REQUIRE(choice);
  CHECK(choice->program == Bin(f, "sys") + "/python3.11");
  CHECK(choice->note.empty());
  CHECK(choice->origin == "the #! of " + shadowed + ", which this torchrun stands in for");
  CHECK(ShadowedTorchrun(((f / "dropin").string() + ":" + (f / "torch_bin").string()).c_str(),
                         f / "cpplaunch", f / "empty_system_bin") == shadowed);
  // No other torchrun: the plain choice.
  CHECK(f.Choose((f / "dropin").string() + ":" + Bin(f, "venv") + ":" + Bin(f, "sys"), dropin)
            ->program == Bin(f, "sys") + "/python3");
}

}  // namespace
}  // namespace cpplaunch
