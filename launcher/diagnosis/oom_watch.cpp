#include "launcher/diagnosis/oom_watch.h"

#include <algorithm>
#include <string>

#include "launcher/diagnosis/proc_reader.h"

namespace cpplaunch {
namespace {

std::optional<std::uint64_t> ReadOomKills(const std::filesystem::path& dir, CgroupVersion version) {
  std::optional<std::string> text = ReadSmallFile(dir / MemoryFilesOf(version).events);
  return text ? KeyedCounter(*text, "oom_kill") : std::nullopt;
}

// v2: the nearest directory, from the process's cgroup up to the mount, with a counter (the
// memory controller may not be enabled for the process's own cgroup).
std::optional<std::filesystem::path> CounterDir(const MemoryCgroupDir& found) {
  std::filesystem::path dir = found.dir;
  for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
    if (ReadOomKills(dir, found.version)) return dir;
    if (found.version == CgroupVersion::kV1 || dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return std::nullopt;
}

}  // namespace

void OomWatch::Baseline(const std::vector<pid_t>& pids) {
  watched_.clear();
  const std::vector<MountEntry> mounts =
      ParseMountInfo(ReadSmallFile("/proc/self/mountinfo").value_or(""));
  for (pid_t pid : pids) {
    std::optional<std::string> cgroup = ReadSmallFile("/proc/" + std::to_string(pid) + "/cgroup");
    if (!cgroup) continue;
    std::optional<MemoryCgroupDir> found = LocateMemoryCgroup(*cgroup, mounts);
    std::optional<std::filesystem::path> dir = found ? CounterDir(*found) : std::nullopt;
    if (!dir || std::any_of(watched_.begin(), watched_.end(),
                            [&](const Watched& w) { return w.dir == *dir; })) {
      continue;
    }
    watched_.push_back(
        Watched{*dir, found->version, ReadOomKills(*dir, found->version).value_or(0)});
  }
}

OomVerdict OomWatch::Check() {
  OomVerdict verdict;
  for (Watched& w : watched_) {
    std::optional<std::uint64_t> kills = ReadOomKills(w.dir, w.version);
    if (!kills) continue;
    verdict.counter_read = true;
    if (*kills <= w.attributed) continue;
    ++w.attributed;
    const MemoryFileNames files = MemoryFilesOf(w.version);
    OomKill oom;
    oom.limit_bytes = MemoryLimit(ReadSmallFile(w.dir / files.limit).value_or(""));
    oom.peak_bytes = ByteCount(ReadSmallFile(w.dir / files.peak).value_or(""));
    verdict.oom = oom;
    return verdict;
  }
  return verdict;
}

}  // namespace cpplaunch
