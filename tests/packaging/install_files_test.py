"""What `cmake --install` ships beside the programs, against the normal build: --version of both
programs, the man page (rendered by man, and listing exactly the options --help lists), bash and
zsh completion (run in real shells), and `cmake --install` itself into a temporary prefix.

usage: install_files_test.py CPPLAUNCH CPPLAUNCH_STORE GENERATED_DIR SOURCE_DIR [unittest args]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

CPPLAUNCH, STORE, GENERATED, SOURCE = (os.path.abspath(a) for a in sys.argv[1:5])
del sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, **kwargs)


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        return re.search(r"project\(cpplaunch .*VERSION (\S+)\)", f.read()).group(1)


def help_spellings():
    """Every option spelling --help lists, from its option lines ("  -r, --redirects VALUE")."""
    text = run([CPPLAUNCH, "--help"]).stdout
    section = text.split("\noptions:\n", 1)[1].split("\nexit status:", 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith("  -"):
            names.update(re.findall(r"(?<![\w-])--?[\w-]+", line.split("  ", 2)[1]))
    return names


class VersionTest(unittest.TestCase):
    def in_checkout(self):
        return os.path.exists(os.path.join(SOURCE, ".git")) and shutil.which("git")

    def check_version(self, program, name):
        out = run([program, "--version"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stderr, "")
        line = f"{name} {project_version()}"
        if not self.in_checkout():
            self.assertEqual(out.stdout, line + "\n")
            return
        # `git describe` of the build's checkout: a tag-relative name or the commit, "-dirty"
        # when the tree had changes. The commit is HEAD's, or an ancestor's when the checkout
        # has moved on since the build (ctest does not rebuild).
        found = re.fullmatch(re.escape(line) + r" \(git ((?:.*-g)?([0-9a-f]{12})(?:-dirty)?)\)\n",
                             out.stdout)
        self.assertIsNotNone(found, out.stdout)
        ancestor = run(["git", "-C", SOURCE, "merge-base", "--is-ancestor", found.group(2), "HEAD"])
        self.assertEqual(ancestor.returncode, 0, f"{found.group(2)} is not HEAD or before it")
        if found.group(1).startswith(found.group(2)):
            self.assertEqual(run(["git", "-C", SOURCE, "tag", "--merged", found.group(2)]).stdout, "",
                             "without a tag-relative name, no tag may be reachable")

    def test_cpplaunch_version(self):
        self.check_version(CPPLAUNCH, "cpplaunch")

    def test_store_version(self):
        self.check_version(STORE, "cpplaunch-store")

    def test_version_is_an_option_like_the_others(self):
        first = run([CPPLAUNCH, "--version"]).stdout
        self.assertEqual(run([CPPLAUNCH, "--vers", "--nproc-per-node=2"]).stdout, first)
        out = run([CPPLAUNCH, "--version=1"])
        self.assertEqual(out.returncode, 2)
        self.assertIn("--version", out.stderr)
        self.assertIn("--version", run([CPPLAUNCH, "--help"]).stdout)


class CmakeInstallTest(unittest.TestCase):
    def check_doc_links(self, docdir):
        """Every link of the installed README.md and docs/ pages to a document (README's
        docs/..., the pages' links to each other) reaches an installed file. Links to what the
        package does not ship (the examples, LICENSE, CONTRIBUTING.md) are not counted."""
        pages = [os.path.join(docdir, "README.md")]
        for root, _, files in os.walk(os.path.join(docdir, "docs")):
            pages += [os.path.join(root, f) for f in files if f.endswith(".md")]
        checked = 0
        for page in pages:
            with open(page) as f:
                targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", f.read())
            for target in targets:
                if "://" in target or target.startswith("mailto:"):
                    continue
                path = os.path.normpath(os.path.join(os.path.dirname(page), target))
                if not path.startswith(os.path.join(docdir, "docs")):
                    continue  # outside docs/: a repository file the package does not ship
                checked += 1
                self.assertTrue(os.path.exists(path),
                                f"{os.path.relpath(page, docdir)} links to {target}, not installed")
        self.assertGreater(checked, 20, "the README's links to docs/ were not found")

    def test_install_tree(self):
        build = os.path.dirname(os.path.dirname(GENERATED))
        with tempfile.TemporaryDirectory() as prefix:
            out = run(["cmake", "--install", build, "--prefix", prefix])
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            for relative in ("bin/cpplaunch", "bin/cpplaunch-store", "bin/cpplaunch-status",
                             "share/man/man1/cpplaunch.1.gz",
                             "share/man/man1/cpplaunch-status.1.gz",
                             "share/bash-completion/completions/cpplaunch",
                             "share/zsh/vendor-completions/_cpplaunch",
                             "share/doc/cpplaunch/docs/ci.md", "share/doc/cpplaunch/README.md",
                             "share/doc/cpplaunch/docs/engines/slurm.md"):
                self.assertTrue(os.path.isfile(os.path.join(prefix, relative)), relative)
            self.check_doc_links(os.path.join(prefix, "share", "doc", "cpplaunch"))
            dropin = os.path.join(prefix, "lib", "cpplaunch", "bin", "torchrun")
            self.assertEqual(os.readlink(dropin), "../../../bin/cpplaunch")
            out = run([dropin, "--version"])
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertTrue(out.stdout.startswith("cpplaunch "), out.stdout)


class ManPageTest(unittest.TestCase):
    PAGE = os.path.join(GENERATED, "cpplaunch.1")

    def render(self):
        if not shutil.which("man"):
            self.skipTest("man is not installed (apt install man-db)")
        out = run(["man", "-l", self.PAGE], env={**os.environ, "MANWIDTH": "80", "MANPAGER": "cat",
                                                "PAGER": "cat", "LANG": "C.UTF-8"})
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def test_renders_without_warnings(self):
        text = self.render()
        self.assertIn("cpplaunch - torchrun-compatible launcher", " ".join(text.split()))
        self.assertNotIn("\u2010", text, "no hyphenation inside names")
        for page in (self.PAGE, os.path.join(GENERATED, "cpplaunch-store.1"),
                     os.path.join(GENERATED, "cpplaunch-status.1")):
            out = run(["groff", "-man", "-Tutf8", "-ww", "-z", page])
            self.assertEqual((out.returncode, out.stderr), (0, ""), page)

    def test_lists_exactly_the_options_of_help(self):
        text = self.render()
        section = text.split("\nOPTIONS\n", 1)[1].split("\nENVIRONMENT\n", 1)[0]
        names = set()
        for line in section.splitlines():
            if re.match(r"^ {7}-", line):
                names.update(re.findall(r"(?<![\w-])--?[\w-]+", line))
        self.assertEqual(names, help_spellings())
        self.assertIn("--nproc-per-node", names)
        self.assertIn("--nproc_per_node", names)

    def test_man_page_is_compressed_for_the_package(self):
        out = run(["gzip", "-dc", self.PAGE + ".gz"])
        with open(self.PAGE) as f:
            self.assertEqual(out.stdout, f.read())


class BashCompletionTest(unittest.TestCase):
    SCRIPT = os.path.join(GENERATED, "cpplaunch.bash")

    def complete(self, line):
        """COMPREPLY for `line` (completing its last word; a trailing space starts a new one),
        the words split as bash splits them (COMP_WORDBREAKS has '=')."""
        words = re.findall(r"=|[^\s=]+", line)
        if line.endswith(" ") or not words:
            words.append("")
        program = (f"source {self.SCRIPT}\n"
                   f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
                   f"COMP_CWORD={len(words) - 1}\n"
                   "_cpplaunch\n"
                   "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        out = run(["bash", "--norc", "--noprofile", "-c", program])
        self.assertEqual((out.returncode, out.stderr), (0, ""))
        return sorted(w for w in out.stdout.splitlines() if w)

    def test_every_spelling_of_help(self):
        self.assertEqual(set(self.complete("cpplaunch -")), help_spellings())

    def test_prefixes_offer_both_spellings(self):
        self.assertEqual(self.complete("cpplaunch --nproc"), ["--nproc-per-node", "--nproc_per_node"])
        self.assertEqual(self.complete("cpplaunch --vers"), ["--version"])

    def test_values_of_enumerated_options(self):
        self.assertEqual(self.complete("cpplaunch --engine="), ["auto", "k8s", "mpi", "none", "slurm"])
        self.assertEqual(self.complete("cpplaunch --engine sl"), ["slurm"])
        self.assertEqual(self.complete("cpplaunch --start_method=fo"), ["fork", "forkserver"])
        self.assertEqual(self.complete("cpplaunch --worker-store "), ["agent", "rank0"])

    def test_after_the_script_its_own_arguments(self):
        self.assertEqual(self.complete("cpplaunch --master-port 29500 --eng"), ["--engine"])
        self.assertEqual(self.complete("cpplaunch --engine=none --eng"), ["--engine"])
        self.assertEqual(self.complete("cpplaunch train.py --eng"), [])
        self.assertEqual(self.complete("cpplaunch --standalone train.py --eng"), [])


class ZshCompletionTest(unittest.TestCase):
    def complete(self, line):
        if not shutil.which("zsh"):
            self.skipTest("zsh is not installed (apt install zsh)")
        out = run(["zsh", "-f", os.path.join(HERE, "zsh_complete.zsh"), GENERATED, line])
        self.assertEqual(out.returncode, 0, out.stderr)
        return sorted(set(w for w in out.stdout.splitlines() if w))

    def test_syntax(self):
        if not shutil.which("zsh"):
            self.skipTest("zsh is not installed (apt install zsh)")
        out = run(["zsh", "-n", os.path.join(GENERATED, "_cpplaunch")])
        self.assertEqual((out.returncode, out.stderr), (0, ""))

    def test_every_spelling_of_help(self):
        self.assertEqual(set(self.complete("cpplaunch -")), help_spellings())

    def test_prefixes_and_values(self):
        self.assertEqual(self.complete("cpplaunch --nproc"), ["--nproc-per-node", "--nproc_per_node"])
        self.assertEqual(self.complete("cpplaunch --engine="), ["auto", "k8s", "mpi", "none", "slurm"])
        self.assertEqual(self.complete("cpplaunch --start-method fo"), ["fork", "forkserver"])

    def test_script_is_a_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            open(os.path.join(tmp, "train_example.py"), "w").close()
            self.assertEqual(self.complete(f"cpplaunch --standalone {tmp}/train_"),
                             ["train_example.py"])


if __name__ == "__main__":
    unittest.main()
