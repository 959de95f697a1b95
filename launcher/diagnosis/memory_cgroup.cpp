#include "launcher/diagnosis/memory_cgroup.h"

#include "base/text.h"

namespace cpplaunch {
namespace {

// v1 reports "no limit" as PAGE_COUNTER_MAX pages rounded to bytes: anything this large.
constexpr std::uint64_t kUnlimitedFloor = std::uint64_t{1} << 62;

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::string_view word : Split(line, ' ')) {
    if (!word.empty()) words.push_back(word);
  }
  return words;
}

bool HasOption(std::string_view options, std::string_view wanted) {
  for (std::string_view option : Split(options, ',')) {
    if (option == wanted) return true;
  }
  return false;
}

// `path` (a cgroup path as /proc/<pid>/cgroup shows it) below `mount`.
std::optional<std::filesystem::path> UnderMount(const MountEntry& mount, std::string path) {
  if (mount.root != "/") {
    if (path.rfind(mount.root, 0) != 0) return std::nullopt;
    path = path.substr(mount.root.size());
  }
  std::filesystem::path dir = mount.mount_point;
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  if (!path.empty()) dir /= path;
  return dir;
}

}  // namespace

std::vector<MountEntry> ParseMountInfo(std::string_view text) {
  std::vector<MountEntry> mounts;
  for (std::string_view line : Split(text, '\n')) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::vector<std::string_view> head = Words(line.substr(0, dash));
    std::vector<std::string_view> tail = Words(line.substr(dash + 3));
    if (head.size() < 5 || tail.size() < 3) continue;
    mounts.push_back(MountEntry{std::string(head[3]), std::string(head[4]), std::string(tail[0]),
                                std::string(tail[2])});
  }
  return mounts;
}

std::optional<MemoryCgroupDir> LocateMemoryCgroup(std::string_view proc_cgroup,
                                                  const std::vector<MountEntry>& mounts) {
  std::optional<std::string> v1_path;
  std::optional<std::string> v2_path;
  for (std::string_view line : Split(proc_cgroup, '\n')) {
    // "hierarchy-id:controller-list:path"; the path itself may contain ':'.
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string path(line.substr(second + 1));
    if (id == "0" && controllers.empty()) v2_path = path;
    if (HasOption(controllers, "memory")) v1_path = path;
  }
  for (const MountEntry& mount : mounts) {
    if (!v1_path || mount.fs_type != "cgroup" || !HasOption(mount.super_options, "memory"))
      continue;
    if (auto dir = UnderMount(mount, *v1_path)) return MemoryCgroupDir{*dir, CgroupVersion::kV1};
  }
  for (const MountEntry& mount : mounts) {
    if (!v2_path || mount.fs_type != "cgroup2") continue;
    if (auto dir = UnderMount(mount, *v2_path)) return MemoryCgroupDir{*dir, CgroupVersion::kV2};
  }
  return std::nullopt;
}

MemoryFileNames MemoryFilesOf(CgroupVersion version) {
  if (version == CgroupVersion::kV1) {
    return {"memory.oom_control", "memory.limit_in_bytes", "memory.max_usage_in_bytes"};
  }
  return {"memory.events", "memory.max", "memory.peak"};
}

std::optional<std::uint64_t> KeyedCounter(std::string_view text, std::string_view key) {
  for (std::string_view line : Split(text, '\n')) {
    std::vector<std::string_view> words = Words(line);
    if (words.size() == 2 && words[0] == key) return ByteCount(words[1]);
  }
  return std::nullopt;
}

std::optional<std::uint64_t> MemoryLimit(std::string_view text) {
  std::optional<std::uint64_t> bytes = ByteCount(text);
  if (!bytes || *bytes >= kUnlimitedFloor) return std::nullopt;
  return bytes;
}

std::optional<std::uint64_t> ByteCount(std::string_view text) {
  text = Strip(text);
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (!IsDigit(c)) return std::nullopt;
    const std::uint64_t next = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (next / 10 != value) return std::nullopt;  // overflow
    value = next;
  }
  return value;
}

}  // namespace cpplaunch
