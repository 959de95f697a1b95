#include "launcher/interpreter/interpreter_choice.h"

#include <catch2/catch.hpp>

#include "launcher/interpreter/pyenv_shim.h"
#include "launcher/interpreter/python_layout.h"
#include "launcher/interpreter/shebang.h"

namespace cpplaunch {
namespace {

using Modules = PythonFacts::Modules;

TEST_CASE("another python3 is looked for only when the first is known to lack a module") {
  CHECK(LooksElsewhere({"/v/bin/python3", "/v/bin/python3", Modules::kMissing, "torch"}));
  CHECK_FALSE(LooksElsewhere({"/v/bin/python3", "/v/bin/python3", Modules::kAll, ""}));
  CHECK_FALSE(LooksElsewhere({"/w/python3", "/w/python3", Modules::kUnknown, ""}));
  CHECK(Fits({"/usr/bin/python3", "/usr/bin/python3", Modules::kAll, ""}));
  CHECK_FALSE(Fits({"/x/python3", "/x/python3", Modules::kUnknown, ""}));
}

TEST_CASE("the chosen interpreter is said in one line with the reason") {
  const PythonFacts first{"/root/.pyenv/shims/python3", "/root/.pyenv/shims/python3 (pyenv 3.11.7)",
                          Modules::kMissing, "torch"};
  const PythonChoice choice =
      OtherPython(first, {"/usr/bin/python3", "/usr/bin/python3", Modules::kAll, ""});
  CHECK(choice.program == "/usr/bin/python3");
  CHECK(choice.note ==
        "the workers run /usr/bin/python3: the python3 on PATH, /root/.pyenv/shims/python3 "
        "(pyenv 3.11.7), has no module 'torch' (PYTHON_EXEC chooses another)");
  CHECK(choice.origin == "python3 on PATH has no module 'torch'");
  const PythonChoice dropin = ShadowedTorchrunPython("/usr/bin/python3.11", "/usr/bin/torchrun");
  CHECK(dropin.program == "/usr/bin/python3.11");
  CHECK(dropin.note.empty());
  CHECK(dropin.origin == "the #! of /usr/bin/torchrun, which this torchrun stands in for");
}

TEST_CASE("ShebangInterpreter: a path or env's name or pip's shell form or nothing") {
  CHECK(ShebangInterpreter("#!/usr/bin/python3.11\n# -*- coding: utf-8 -*-\n") ==
        "/usr/bin/python3.11");
  CHECK(ShebangInterpreter("#! /opt/venv/bin/python -E\nimport re\n") == "/opt/venv/bin/python");
  CHECK(ShebangInterpreter("#!/usr/bin/env python3\n") == "python3");
  CHECK(ShebangInterpreter("#!/usr/bin/env -S python3 -u\n") == "python3");
  CHECK(ShebangInterpreter("#!/bin/sh\n'''exec' \"/very/long/venv/bin/python3\" \"$0\" \"$@\"\n"
                           "' '''\n") == "/very/long/venv/bin/python3");
  CHECK_FALSE(ShebangInterpreter("#!/bin/sh\nexec cpplaunch \"$@\"\n"));
  CHECK_FALSE(ShebangInterpreter("#!/usr/bin/env bash\n"));
  CHECK_FALSE(
      ShebangInterpreter("\x7f"
                         "ELF\x02\x01"));
  CHECK_FALSE(ShebangInterpreter(""));
}

TEST_CASE("pyenv: a shim's root and the version names") {
  const std::string shim =
      "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\n\nexport PYENV_ROOT=\"/root/.pyenv\"\n"
      "exec \"/root/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n";
  CHECK(PyenvShimRoot(shim) == "/root/.pyenv");
  CHECK_FALSE(PyenvShimRoot("#!/bin/sh\nexport PYENV_ROOT=\"/x\"\nexec python3 \"$@\"\n"));
  CHECK(PyenvVersionNames("3.11.7\n") == std::vector<std::string>{"3.11.7"});
  CHECK(PyenvVersionNames("# pinned\n3.12.1 system\n") ==
        std::vector<std::string>{"3.12.1", "system"});
  CHECK(PyenvVersionNames("3.10.13:3.9.18") == std::vector<std::string>{"3.10.13", "3.9.18"});
}

TEST_CASE("python_layout: pyvenv.cfg and the version from a name and the search dirs") {
  const VenvConfig config =
      ParseVenvConfig("home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n");
  CHECK(config.home == "/usr/bin");
  CHECK(config.system_site_packages);
  CHECK(config.version == "3.11");
  CHECK_FALSE(ParseVenvConfig("home = /usr/bin\ninclude-system-site-packages = false\n")
                  .system_site_packages);
  CHECK(VersionFromName("python3.11") == "3.11");
  CHECK(VersionFromName("python3").empty());
  CHECK(VersionFromName("python3.11-config").empty());
  CHECK(TopLevelModule("torch.distributed.run") == "torch");

  PythonLayout debian{"/usr", "3.11", std::nullopt, false};
  SearchEnv env{"/p1:/p2", "/home/u", false, "/work"};
  using P = std::filesystem::path;
  CHECK(ModuleSearchDirs(debian, env) ==
        std::vector<P>{"/work", "/p1", "/p2", "/usr/lib/python3.11",
                       "/usr/lib/python3.11/lib-dynload",
                       "/home/u/.local/lib/python3.11/site-packages",
                       "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                       "/usr/lib/python3.11/dist-packages", "/usr/lib/python3.11/site-packages"});
  // A venv: its own site-packages, no user site, the base's only with system site packages.
  PythonLayout venv{"/usr", "3.11", P("/v"), false};
  const auto dirs = ModuleSearchDirs(venv, SearchEnv{std::nullopt, "/home/u", false, ""});
  CHECK(dirs == std::vector<P>{"/usr/lib/python3.11", "/usr/lib/python3.11/lib-dynload",
                               "/v/lib/python3.11/site-packages"});
  venv.venv_system_site = true;
  CHECK(ModuleSearchDirs(venv, SearchEnv{}).back() == P("/usr/lib/python3.11/site-packages"));
}

}  // namespace
}  // namespace cpplaunch
