#pragma once
// Where the kernel counts a process's memory and its OOM kills, and what those files say. Pure:
// the caller reads /proc/<pid>/cgroup, /proc/self/mountinfo and the control files (oom_watch.h).
//
// Two layouts are understood:
//   cgroup v2: memory.events ("oom_kill N"), memory.max ("max" or bytes), memory.peak (bytes,
//     Linux >= 5.19). The process's own cgroup may lack them (the memory controller is not
//     enabled for its subtree, e.g. cpplaunch's job cgroup): the nearest ancestor that has
//     memory.events counts its kills, since v2 counts hierarchically.
//   cgroup v1 (alone, or hybrid: cgroup2 mounted without controllers beside v1 hierarchies):
//     the "memory" hierarchy's memory.oom_control ("oom_kill N", Linux >= 4.13),
//     memory.limit_in_bytes and memory.max_usage_in_bytes.
// v1 wins when the process has a v1 memory hierarchy: that is where the controller lives.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

// One line of /proc/<pid>/mountinfo, the fields needed to map a cgroup path to a directory.
struct MountEntry {
  std::string root;           // the subtree of the file system mounted here ("/" usually)
  std::string mount_point;    // "/sys/fs/cgroup/memory"
  std::string fs_type;        // "cgroup", "cgroup2"
  std::string super_options;  // "rw,memory" for a v1 hierarchy
};
std::vector<MountEntry> ParseMountInfo(std::string_view text);

enum class CgroupVersion { kV1, kV2 };

// The directory to start looking in and how to read it.
struct MemoryCgroupDir {
  std::filesystem::path dir;
  CgroupVersion version = CgroupVersion::kV2;
};

// From /proc/<pid>/cgroup and the mounts: the process's memory cgroup directory; nullopt when
// neither a v1 memory hierarchy nor cgroup2 is mounted (or the process is outside the mount's
// subtree).
std::optional<MemoryCgroupDir> LocateMemoryCgroup(std::string_view proc_cgroup,
                                                  const std::vector<MountEntry>& mounts);

// The control file names of a version.
struct MemoryFileNames {
  std::string_view events;  // holds "oom_kill N"
  std::string_view limit;
  std::string_view peak;
};
MemoryFileNames MemoryFilesOf(CgroupVersion version);

// "oom_kill 3" in memory.events / memory.oom_control; nullopt when the key is missing.
std::optional<std::uint64_t> KeyedCounter(std::string_view text, std::string_view key);
// memory.max / memory.limit_in_bytes: nullopt for "max" and v1's "unlimited" (PAGE_COUNTER_MAX
// pages, about 2^63 bytes), and for text that is not a number.
std::optional<std::uint64_t> MemoryLimit(std::string_view text);
// A byte count as a plain number ("memory.peak"); nullopt for anything else.
std::optional<std::uint64_t> ByteCount(std::string_view text);

}  // namespace cpplaunch
