#include "launcher/placement/numa_topology.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/text.h"
#include "launcher/placement/gpu_count.h"

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return std::string(Strip(text.str()));
}

std::optional<std::set<int>> ReadCpuList(const fs::path& path) {
  auto text = ReadText(path);
  if (!text) return std::nullopt;
  try {
    return ParseCpuList(*text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::optional<long> ReadNumber(const fs::path& path, int base = 10) {
  auto text = ReadText(path);
  if (!text || text->empty()) return std::nullopt;
  try {
    return std::stol(*text, nullptr, base);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The shared_cpu_list of the highest-level data or unified cache of one CPU.
std::optional<std::set<int>> LastCache(const fs::path& cpu_dir) {
  std::error_code ec;
  long best_level = -1;
  std::optional<std::set<int>> best;
  for (const auto& entry : fs::directory_iterator(cpu_dir / "cache", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0 || name.size() == 5 ||
        !std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    const auto type = ReadText(entry.path() / "type");
    if (!type || (*type != "Unified" && *type != "Data")) continue;
    const auto level = ReadNumber(entry.path() / "level");
    if (!level || *level <= best_level) continue;
    if (auto shared = ReadCpuList(entry.path() / "shared_cpu_list")) {
      best_level = *level;
      best = std::move(shared);
    }
  }
  return best;
}

// NVIDIA display controllers' NUMA nodes, in PCI address order.
std::vector<int> PhysicalGpuNodes(const fs::path& root) {
  std::vector<fs::path> devices;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root / "bus/pci/devices", ec)) {
    if (ReadText(entry.path() / "vendor") != "0x10de") continue;
    const auto cls = ReadText(entry.path() / "class");
    if (!cls || cls->rfind("0x03", 0) != 0) continue;
    devices.push_back(entry.path());
  }
  std::sort(devices.begin(), devices.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  std::vector<int> nodes;
  nodes.reserve(devices.size());
  for (const fs::path& device : devices) {
    // -1 ("no NUMA information", single-node machines): node 0, as torch reads it.
    nodes.push_back(static_cast<int>(std::max(ReadNumber(device / "numa_node").value_or(-1), 0L)));
  }
  return nodes;
}

// CUDA_VISIBLE_DEVICES as CUDA numbers the GPUs: the visible prefix of the ordinal list.
std::vector<int> VisibleGpuNodes(const std::vector<int>& physical,
                                 const std::optional<std::string>& visible) {
  if (!visible) return physical;
  const int count = VisibleGpuCount(visible, static_cast<int>(physical.size()));
  std::vector<int> nodes;
  for (std::string_view entry : Split(*visible, ',')) {
    if (static_cast<int>(nodes.size()) >= count) break;
    entry = Strip(entry);
    if (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) {
      throw NumaBindingError(
          "--numa-binding: CUDA_VISIBLE_DEVICES names GPUs by UUID, which cpplaunch cannot map "
          "to PCI devices; list them by index (or remove the option)");
    }
    nodes.push_back(physical.at(static_cast<std::size_t>(std::stoi(std::string(entry)))));
  }
  return nodes;
}

}  // namespace

NumaTopology ReadNumaTopology(const fs::path& sysfs_root, const std::set<int>& cpus,
                              const std::optional<std::string>& cuda_visible_devices) {
  NumaTopology t;
  const fs::path node_dir = sysfs_root / "devices/system/node";
  t.nodes = ReadCpuList(node_dir / "possible").value_or(std::set<int>{});
  for (int node : t.nodes) {
    if (auto list = ReadCpuList(node_dir / ("node" + std::to_string(node)) / "cpulist")) {
      t.node_cpus[node] = std::move(*list);
    }
  }
  for (int cpu : cpus) {
    const fs::path dir = sysfs_root / "devices/system/cpu" / ("cpu" + std::to_string(cpu));
    if (auto package = ReadNumber(dir / "topology/physical_package_id")) {
      t.cpu_package[cpu] = static_cast<int>(*package);
    }
    if (auto siblings = ReadCpuList(dir / "topology/thread_siblings_list")) {
      t.cpu_siblings[cpu] = std::move(*siblings);
    }
    if (auto cache = LastCache(dir)) t.cpu_last_cache[cpu] = std::move(*cache);
  }
  t.gpu_nodes = VisibleGpuNodes(PhysicalGpuNodes(sysfs_root), cuda_visible_devices);
  return t;
}

}  // namespace cpplaunch
