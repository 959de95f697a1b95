#include "launcher/diagnosis/proc_reader.h"

#include <iterator>
#include <sstream>
#include <system_error>

#include "base/text.h"

namespace cpplaunch {
namespace {

std::filesystem::path ProcDir(pid_t pid) { return "/proc/" + std::to_string(pid); }

}  // namespace

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::optional<std::string> text = ReadSmallFile(ProcDir(pid) / "stat");
  return text ? ParseProcStat(*text) : std::nullopt;
}

std::string ReadWchan(pid_t pid) {
  std::string wchan(Strip(ReadSmallFile(ProcDir(pid) / "wchan").value_or("")));
  return wchan == "0" ? "" : wchan;
}

std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(ProcDir(pid) / "task", ec)) {
    std::istringstream in(ReadSmallFile(task.path() / "children").value_or(""));
    for (pid_t child; in >> child;) children.push_back(child);
  }
  return children;
}

std::optional<std::uint64_t> TreeCpuTicks(pid_t root, std::size_t max_processes) {
  std::optional<ProcStat> top = ReadProcStat(root);
  if (!top) return std::nullopt;
  std::uint64_t ticks = top->own_ticks + top->children_ticks;
  std::vector<pid_t> pending = ChildrenOf(root);
  for (std::size_t visited = 1; !pending.empty() && visited < max_processes; ++visited) {
    const pid_t pid = pending.back();
    pending.pop_back();
    if (std::optional<ProcStat> stat = ReadProcStat(pid)) {
      ticks += stat->own_ticks + stat->children_ticks;
    }
    std::vector<pid_t> more = ChildrenOf(pid);
    pending.insert(pending.end(), more.begin(), more.end());
  }
  return ticks;
}

}  // namespace cpplaunch
