"""The Debian package: scripts/package builds it (Release, the three programs only, in its own
tree); its contents, its control file's Depends and lintian are checked from the .deb; then,
as root only, one real `apt-get install ./cpplaunch_*.deb` (only when apt would install nothing
else: every dependency is already there after scripts/setup, and nothing is downloaded), `cpplaunch --version`, a 2-worker job, `man cpplaunch`,
the torchrun drop-in through PATH, and `apt-get remove`, after which nothing of it is left.

usage: package_test.py SOURCE_DIR PACKAGE_BUILD_DIR [unittest args]
       package_test.py SOURCE_DIR PACKAGE_BUILD_DIR --build-only
--build-only builds the package and checks nothing: scripts/test runs it in its background lane
(it measures no time), so that the checks later find the package built.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

SOURCE, PACKAGE_BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
del sys.argv[1:3]
DEB = None  # built once, by setUpModule


def run(argv, timeout=120, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)


def setUpModule():
    global DEB
    for tool in ("dpkg-deb", "dpkg-shlibdeps", "cpack"):
        if not shutil.which(tool):
            raise unittest.SkipTest(f"{tool} is missing (scripts/setup installs dpkg-dev)")
    started = time.monotonic()
    out = run([os.path.join(SOURCE, "scripts", "package")], timeout=1500,
              env={**os.environ, "PACKAGE_BUILD_DIR": PACKAGE_BUILD})
    if out.returncode != 0:
        raise AssertionError(f"scripts/package failed:\n{out.stdout}\n{out.stderr}")
    DEB = out.stdout.strip().splitlines()[-1]
    print(f"scripts/package: {DEB} in {time.monotonic() - started:.0f} s", file=sys.stderr)


def build_only():
    try:
        setUpModule()
    except unittest.SkipTest as skipped:
        print(f"skipped: {skipped}")
        return 77
    return 0


def field(name):
    return run(["dpkg-deb", "-f", DEB, name]).stdout.strip()


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def package_state():
    out = run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", "cpplaunch"])
    return out.stdout.strip() if out.returncode == 0 else "not known"


class PackageContentsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="cpplaunch-deb-")
        subprocess.run(["dpkg-deb", "-x", DEB, cls.root], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root)

    def path(self, relative):
        return os.path.join(self.root, relative)

    def test_control_file(self):
        self.assertEqual(field("Package"), "cpplaunch")
        depends = {d.strip().split(" ")[0] for d in field("Depends").split(",")}
        # From dpkg-shlibdeps: OpenSSL (the TLS module's, for etcd over https) and the C and C++
        # runtimes.
        for prefix in ("libc6", "libstdc++6", "libgcc-s1", "libssl3"):
            self.assertTrue(any(d.startswith(prefix) for d in depends), (prefix, depends))
        # No longer linked (each shared library costs every launch its loading).
        for gone in ("libspdlog", "libfmt"):
            self.assertFalse(any(d.startswith(gone) for d in depends), (gone, depends))
        with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
            version = re.search(r"project\(cpplaunch .*VERSION (\S+)\)", f.read()).group(1)
        self.assertEqual(field("Version"), version)

    def test_files(self):
        for relative in ("usr/bin/cpplaunch", "usr/bin/cpplaunch-store", "usr/bin/cpplaunch-status",
                         "usr/share/man/man1/cpplaunch.1.gz",
                         "usr/share/man/man1/cpplaunch-store.1.gz",
                         "usr/share/man/man1/cpplaunch-status.1.gz",
                         "usr/share/bash-completion/completions/cpplaunch",
                         "usr/share/zsh/vendor-completions/_cpplaunch",
                         "usr/share/doc/cpplaunch/copyright", "usr/share/doc/cpplaunch/changelog.gz",
                         "usr/share/doc/cpplaunch/README.md",
                         "usr/share/doc/cpplaunch/docs/ci.md",
                         "usr/share/doc/cpplaunch/docs/user-guide.md",
                         "usr/share/doc/cpplaunch/docs/engines/slurm.md",
                         "usr/lib/cpplaunch/modules/libcpplaunch-tls.so"):
            self.assertTrue(os.path.isfile(self.path(relative)), relative)
        self.assertEqual(os.readlink(self.path("usr/lib/cpplaunch/bin/torchrun")),
                         "../../../bin/cpplaunch")
        self.assertFalse(os.path.exists(self.path("usr/bin/torchrun")))

    def test_programs_are_stripped_release_builds(self):
        for program in ("cpplaunch", "cpplaunch-store", "cpplaunch-status"):
            sections = run(["readelf", "-S", "-W", self.path("usr/bin/" + program)]).stdout
            self.assertNotIn(".symtab", sections, program)
            self.assertNotIn(".debug_info", sections, program)
        size = os.path.getsize(self.path("usr/bin/cpplaunch"))
        print(f"usr/bin/cpplaunch: {size / 1e6:.2f} MB", file=sys.stderr)
        self.assertLess(size, 8_000_000)

    def test_only_the_tls_module_loads_openssl(self):
        # Every launch would pay for loading libssl and libcrypto; only https to etcd needs them.
        def needed(relative):
            dynamic = run(["readelf", "-d", "-W", self.path(relative)]).stdout
            return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
        for program in ("cpplaunch", "cpplaunch-store", "cpplaunch-status"):
            libraries = needed("usr/bin/" + program)
            self.assertTrue(libraries, program)
            self.assertFalse([n for n in libraries if "ssl" in n or "crypto" in n], (program, libraries))
        self.assertIn("libssl.so.3", needed("usr/lib/cpplaunch/modules/libcpplaunch-tls.so"))

    def test_extracted_program_runs(self):
        out = run([self.path("usr/bin/cpplaunch"), "--version"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("cpplaunch " + field("Version")), out.stdout)

    def test_copyright_names_the_license(self):
        # BSD-3-Clause, as the repository's LICENSE and PyTorch's own.
        text = Path(self.path("usr/share/doc/cpplaunch/copyright")).read_text()
        self.assertIn("License: BSD-3-Clause", text)
        self.assertIn("Neither the name of the copyright holder", text)

    def test_changelog_names_this_version(self):
        text = run(["gzip", "-dc", self.path("usr/share/doc/cpplaunch/changelog.gz")]).stdout
        self.assertTrue(text.startswith(f"cpplaunch ({field('Version')}) "), text[:80])


class LintianTest(unittest.TestCase):
    def test_no_errors(self):
        if not shutil.which("lintian"):
            self.skipTest("lintian is not installed (scripts/setup installs it)")
        out = run(["lintian", "--tag-display-limit", "0", DEB], timeout=300)
        errors = [line for line in out.stdout.splitlines() if line.startswith("E:")]
        self.assertEqual(errors, [], out.stdout + out.stderr)


class InstallTest(unittest.TestCase):
    """One real install on this machine (root only), removed again whatever happens."""

    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("installing a package needs root (a CI machine runs this as root)")
        if not shutil.which("apt-get"):
            self.skipTest("apt-get is missing")
        if package_state() not in ("un", "not known", "rc"):
            self.skipTest(f"a cpplaunch package is already installed here ({package_state()}): "
                          "not replacing it")
        self.installed = False

    def tearDown(self):
        if getattr(self, "installed", False) and package_state().startswith("i"):
            run(["apt-get", "purge", "-y", "cpplaunch"], timeout=300)

    def apt(self, *args):
        out = run(["apt-get", "-y", "-o", "DPkg::Lock::Timeout=120", *args], timeout=300,
                  env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_install_run_remove(self):
        torchrun = shutil.which("torchrun")
        torchrun_sum = sha256_of(torchrun) if torchrun else None
        # Nothing may be fetched from anywhere: only when apt would install this package alone.
        plan = run(["apt-get", "install", "--simulate", os.path.abspath(DEB)], timeout=300)
        others = [l for l in plan.stdout.splitlines()
                  if l.startswith("Inst ") and not l.startswith("Inst cpplaunch ")]
        if plan.returncode != 0 or others:
            self.skipTest("installing would fetch dependencies (run scripts/setup): "
                          + "; ".join(others or [plan.stderr.strip()]))
        self.apt("install", os.path.abspath(DEB))
        self.installed = True
        self.assertEqual(package_state(), "ii")
        files = [f for f in run(["dpkg", "-L", "cpplaunch"]).stdout.splitlines() if f]

        out = run(["/usr/bin/cpplaunch", "--version"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("cpplaunch " + field("Version")))

        job = run(["/usr/bin/cpplaunch", "--nproc-per-node=2", "--no-python", "/bin/sh", "-c",
                   'echo "rank $RANK of $WORLD_SIZE"'], timeout=60)
        self.assertEqual(job.returncode, 0, job.stdout + job.stderr)
        self.assertIn("rank 0 of 2", job.stdout)
        self.assertIn("rank 1 of 2", job.stdout)

        page = run(["man", "-P", "cat", "cpplaunch"], env={**os.environ, "MANWIDTH": "80"})
        self.assertEqual(page.returncode, 0, page.stderr)
        self.assertIn("--nproc-per-node", page.stdout)

        dropin = run(["sh", "-c", "command -v torchrun; torchrun --version"],
                     env={**os.environ, "PATH": "/usr/lib/cpplaunch/bin:" + os.environ["PATH"]})
        self.assertEqual(dropin.stdout.splitlines()[0], "/usr/lib/cpplaunch/bin/torchrun")
        self.assertTrue(dropin.stdout.splitlines()[1].startswith("cpplaunch "), dropin.stdout)
        if torchrun:
            self.assertEqual(sha256_of(torchrun), torchrun_sum)

        self.apt("remove", "cpplaunch")
        self.assertIn(package_state(), ("un", "not known"))
        owned_dirs = [f for f in files if "cpplaunch" in f]
        left = [f for f in files if os.path.lexists(f) and (not os.path.isdir(f) or f in owned_dirs)]
        self.assertEqual(left, [])
        self.installed = False


if __name__ == "__main__":
    if sys.argv[1:] == ["--build-only"]:
        sys.exit(build_only())
    unittest.main()
