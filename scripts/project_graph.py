"""The project's libraries as its CMakeLists.txt files declare them: each library's folder,
sources and declared dependencies, and which library each source file belongs to.

Read as text from the source tree (no build needed), for scripts/code-shape --check (no
include may reach a library that is not among the includer's dependencies) and
scripts/check-architecture (docs/architecture.md says what the CMake graph says). It reads the
forms the project's own CMakeLists use: add_library / add_executable, target_sources, a
file(GLOB) of the folder's *.cpp, and target_link_libraries.
"""

import re
from pathlib import Path

# The source roots: every folder below them that holds .h or .cpp files is a room of the map.
SOURCE_ROOTS = ["base", "worker_env", "etcd_client", "rendezvous", "launcher"]

_COMMAND = re.compile(r"^\s*(add_library|add_executable|target_sources|target_link_libraries)"
                      r"\s*\(([^)]*)\)", re.M)
_LINK_WORDS = {"PUBLIC", "PRIVATE", "INTERFACE"}


class Target:
    def __init__(self, name, folder, kind):
        self.name = name
        self.folder = folder  # relative to the root, e.g. "launcher/agent"
        self.kind = kind  # "library" or "executable"
        self.sources = set()  # relative paths of .cpp files
        self.globbed = False  # sources: every *.cpp of the folder
        self.deps = []  # declared link dependencies (any name; see project_deps)


def _strip_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def read_targets(root):
    """Every target the source roots' CMakeLists.txt files define, by name."""
    root = Path(root)
    targets = {}
    for top in SOURCE_ROOTS:
        for cmake in sorted((root / top).rglob("CMakeLists.txt")):
            folder = str(cmake.parent.relative_to(root))
            text = _strip_comments(cmake.read_text())
            for command, args in _COMMAND.findall(text):
                words = args.split()
                if not words:
                    continue
                name, rest = words[0], words[1:]
                if command in ("add_library", "add_executable"):
                    target = Target(name, folder, "library" if command == "add_library" else
                                    "executable")
                    targets[name] = target
                    for word in rest:
                        if word.endswith(".cpp"):
                            target.sources.add(f"{folder}/{word}")
                        elif word.startswith("${") and "sources" in word:
                            target.globbed = True
                elif command == "target_sources" and name in targets:
                    for word in rest:
                        if word.endswith(".cpp"):
                            targets[name].sources.add(f"{folder}/{word}")
                elif command == "target_link_libraries" and name in targets:
                    targets[name].deps += [w for w in rest if w not in _LINK_WORDS]
    return targets


def project_deps(targets, name):
    """The declared dependencies of `name` that are the project's own targets."""
    return [d for d in targets[name].deps if d in targets]


def closure(targets, name):
    """Every project target `name` may use: its dependencies, theirs, and so on."""
    seen, pending = set(), [name]
    while pending:
        for dep in project_deps(targets, pending.pop()):
            if dep not in seen:
                seen.add(dep)
                pending.append(dep)
    return seen


def cycles(targets):
    """Pairs (a, b) where a depends on b and b, through its own dependencies, on a."""
    return [(a, b) for a in targets for b in project_deps(targets, a)
            if a in closure(targets, b)]


def source_files(root):
    root = Path(root)
    return sorted(str(f.relative_to(root)) for top in SOURCE_ROOTS if (root / top).is_dir()
                  for f in (root / top).rglob("*") if f.suffix in (".h", ".cpp"))


def source_folders(root):
    return sorted({str(Path(f).parent) for f in source_files(root)})


def owner_map(root, targets):
    """Source file -> the target it belongs to. A .cpp belongs to the target that compiles it; a
    header to its .cpp's target, or else to the first library defined in its folder."""
    owners = {}
    for target in targets.values():
        for source in target.sources:
            owners[source] = target.name
    first_library = {}
    for target in targets.values():
        if target.kind == "library":
            first_library.setdefault(target.folder, target.name)
    for f in source_files(root):
        if f in owners:
            continue
        folder = str(Path(f).parent)
        twin = f[:-2] + ".cpp" if f.endswith(".h") else None
        globbing = [t for t in targets.values() if t.globbed and t.folder == folder]
        if twin in owners:
            owners[f] = owners[twin]
        elif f.endswith(".cpp") and globbing:
            owners[f] = globbing[0].name
        elif folder in first_library:
            owners[f] = first_library[folder]
    return owners


def folder_deps(targets, folder):
    """The folders whose libraries the libraries defined in `folder` declare as dependencies."""
    used = set()
    for target in targets.values():
        if target.folder == folder and target.kind == "library":
            used |= {targets[d].folder for d in project_deps(targets, target.name)}
    used.discard(folder)
    return used
