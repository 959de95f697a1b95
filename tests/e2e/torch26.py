"""PyTorch 2.6 for the tests: Debian trixie's python3-torch in the chroot that scripts/setup
builds (scripts/setup-torch26), run through a PYTHON_EXEC wrapper.

The wrapper gives each Python process its own private mount namespace (unshare -m) in which
/proc, /dev, /sys, the host's /etc/hosts (gloo resolves the host name) and the test's scratch
directory are bind-mounted into the root (the scratch directory at its own path, on a tmpfs
/tmp), then runs `chroot ROOT /usr/bin/python3`. So workers see their scripts and files at the
paths the launcher gives them, and nothing stays mounted when a process ends or dies: the
cached root itself is never mounted into outside such a namespace, and never deleted here.

    with torch26.Scratch("my-test", [script, ...]) as scratch:
        scratch.python     # the wrapper: PYTHON_EXEC, or argv[0] for a 2.6 Python
        scratch.path(name) # a copied file, or a new path, inside the scratch directory
"""
import os
import shutil
import subprocess
import tempfile

ROOT = os.environ.get("CPPLAUNCH_TORCH26_ROOT", "/var/cache/cpplaunch/trixie-torch")
READY = os.path.join(ROOT, ".cpplaunch-torch26-ready")
SKIP = 77

# $1 root, $2 scratch directory, then python3's arguments. The working directory is kept when
# it exists inside the root (the scratch directory), else it is /.
WRAPPER = r"""#!/bin/sh
# PyTorch 2.6 from the trixie root (tests/e2e/torch26.py). Mounts live in this process's private
# mount namespace only.
exec unshare --mount --propagation private /bin/sh -ec '
root=$1 scratch=$2
shift 2
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount --rbind /proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount --bind -o ro /etc/hosts "$root/etc/hosts"
mkdir -p "$root$scratch"
mount --bind "$scratch" "$root$scratch"
exec chroot "$root" /bin/sh -c "cd \"\$0\" 2>/dev/null || cd /; exec /usr/bin/python3 \"\$@\"" "$PWD" "$@"
' sh '{root}' '{scratch}' "$@"
"""


def skip_reason():
    """Why the 2.6 tests cannot run here, or None."""
    if not os.path.isfile(READY):
        return (f"no PyTorch 2.6 root at {ROOT} (scripts/setup builds it: scripts/setup-torch26; "
                "it needs root, debootstrap and Debian's archive)")
    if os.geteuid() != 0:
        return "the PyTorch 2.6 root needs root (unshare -m, mount, chroot)"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is missing"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot make a private mount namespace: {probe.stderr.strip()}"
    return None


def version():
    with open(READY) as f:
        return f.read().strip()


class Scratch:
    """A scratch directory under /tmp, shared with the 2.6 root, holding the wrapper and copies
    of the given files. Removed on exit."""

    def __init__(self, name, files=()):
        self.dir = tempfile.mkdtemp(prefix=f"cpplaunch-{name}-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.python = os.path.join(self.dir, "python26")
        with open(self.python, "w") as f:
            f.write(WRAPPER.replace("{root}", ROOT).replace("{scratch}", self.dir))
        os.chmod(self.python, 0o755)
        for file in files:
            shutil.copy(file, self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # The scratch directory is on the host's /tmp; the workers' mounts of it were private.
        shutil.rmtree(self.dir, ignore_errors=True)
