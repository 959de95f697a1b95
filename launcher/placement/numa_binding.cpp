#include "launcher/placement/numa_binding.h"

#include <algorithm>
#include <charconv>

#include "base/text.h"

namespace cpplaunch {
namespace {

std::string PolicyName(NumaPolicy policy) {
  switch (policy) {
    case NumaPolicy::kNode:
      return "node";
    case NumaPolicy::kSocket:
      return "socket";
    case NumaPolicy::kExclusive:
      return "exclusive";
    case NumaPolicy::kCoreComplex:
      return "core-complex";
  }
  return "?";
}

std::set<int> Intersect(const std::set<int>& a, const std::set<int>& b) {
  std::set<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

int GpuNode(const NumaTopology& t, int gpu_index) {
  if (gpu_index < 0 || gpu_index >= static_cast<int>(t.gpu_nodes.size())) {
    throw NumaBindingError("no GPU " + std::to_string(gpu_index) + " (this host shows " +
                           std::to_string(t.gpu_nodes.size()) + ")");
  }
  return t.gpu_nodes[static_cast<std::size_t>(gpu_index)];
}

std::set<int> AllowedCpusOfNode(const NumaTopology& t, const std::set<int>& allowed, int node) {
  auto it = t.node_cpus.find(node);
  if (it == t.node_cpus.end()) {
    throw NumaBindingError("the CPUs of NUMA node " + std::to_string(node) + " are unknown");
  }
  return Intersect(it->second, allowed);
}

const std::set<int>& Lookup(const std::map<int, std::set<int>>& map, int cpu, const char* what) {
  auto it = map.find(cpu);
  if (it == map.end() || it->second.empty()) {
    throw NumaBindingError(std::string("the ") + what + " of CPU " + std::to_string(cpu) +
                           " is unknown");
  }
  return it->second;
}

int SocketOfNode(const NumaTopology& t, const std::set<int>& allowed, int node) {
  const std::set<int> cpus = AllowedCpusOfNode(t, allowed, node);
  if (cpus.empty()) {
    throw NumaBindingError("NUMA node " + std::to_string(node) + " has no CPU this agent may use");
  }
  auto it = t.cpu_package.find(*cpus.begin());
  if (it == t.cpu_package.end()) {
    throw NumaBindingError("the socket of CPU " + std::to_string(*cpus.begin()) + " is unknown");
  }
  return it->second;
}

// The node's GPUs in index order and the position of `gpu_index` among them.
std::pair<std::size_t, std::size_t> PositionOnNode(const NumaTopology& t, int gpu_index, int node) {
  std::size_t position = 0, count = 0;
  for (std::size_t i = 0; i < t.gpu_nodes.size(); ++i) {
    if (t.gpu_nodes[i] != node) continue;
    if (static_cast<int>(i) == gpu_index) position = count;
    ++count;
  }
  return {position, count};
}

// Groups `cpus` by the lowest CPU of the set `group_of` gives each (a core, a cache).
std::map<int, std::set<int>> GroupBy(const std::set<int>& cpus,
                                     const std::map<int, std::set<int>>& group_of,
                                     const char* what) {
  std::map<int, std::set<int>> groups;
  for (int cpu : cpus) groups[*Lookup(group_of, cpu, what).begin()].insert(cpu);
  return groups;
}

std::set<int> Node(const NumaTopology& t, const std::set<int>& allowed, int gpu_index) {
  return AllowedCpusOfNode(t, allowed, GpuNode(t, gpu_index));
}

std::set<int> Socket(const NumaTopology& t, const std::set<int>& allowed, int gpu_index) {
  const int socket = SocketOfNode(t, allowed, GpuNode(t, gpu_index));
  std::set<int> cpus;
  for (int node : t.nodes) {
    // torch asks every possible node for its socket, so a node without usable CPUs fails too.
    if (SocketOfNode(t, allowed, node) != socket) continue;
    const std::set<int> more = AllowedCpusOfNode(t, allowed, node);
    cpus.insert(more.begin(), more.end());
  }
  return cpus;
}

std::set<int> Exclusive(const NumaTopology& t, const std::set<int>& allowed, int gpu_index) {
  const int node = GpuNode(t, gpu_index);
  const auto [position, gpus] = PositionOnNode(t, gpu_index, node);
  const auto cores = GroupBy(AllowedCpusOfNode(t, allowed, node), t.cpu_siblings, "core");
  const std::size_t per_gpu = cores.size() / gpus;
  const std::size_t extra = cores.size() % gpus;
  if (per_gpu < 1) {
    throw NumaBindingError("NUMA node " + std::to_string(node) + " has only " +
                           std::to_string(cores.size()) + " physical cores for its " +
                           std::to_string(gpus) + " GPUs");
  }
  const std::size_t start = position * per_gpu + std::min(position, extra);
  const std::size_t end = start + per_gpu + (position < extra ? 1 : 0);
  std::set<int> cpus;
  std::size_t i = 0;
  for (const auto& [first, core] : cores) {
    if (i >= start && i < end) cpus.insert(core.begin(), core.end());
    ++i;
  }
  return cpus;
}

std::set<int> CoreComplex(const NumaTopology& t, const std::set<int>& allowed, int gpu_index) {
  const int node = GpuNode(t, gpu_index);
  const std::size_t position = PositionOnNode(t, gpu_index, node).first;
  const auto caches = GroupBy(AllowedCpusOfNode(t, allowed, node), t.cpu_last_cache, "cache");
  if (caches.empty()) {
    throw NumaBindingError("NUMA node " + std::to_string(node) + " has no CPU this agent may use");
  }
  std::vector<std::pair<int, std::set<int>>> ordered(caches.begin(), caches.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.second.size() > b.second.size();  // then by lowest CPU: the map's order
  });
  return ordered[position % ordered.size()].second;
}

}  // namespace

std::optional<NumaPolicy> ParseNumaPolicy(std::string_view text) {
  if (text == "node") return NumaPolicy::kNode;
  if (text == "socket") return NumaPolicy::kSocket;
  if (text == "exclusive") return NumaPolicy::kExclusive;
  if (text == "core-complex") return NumaPolicy::kCoreComplex;
  return std::nullopt;
}

std::set<int> NumaCpusFor(const NumaTopology& topology, const std::set<int>& allowed, int gpu_index,
                          NumaPolicy policy) {
  std::set<int> cpus;
  switch (policy) {
    case NumaPolicy::kNode:
      cpus = Node(topology, allowed, gpu_index);
      break;
    case NumaPolicy::kSocket:
      cpus = Socket(topology, allowed, gpu_index);
      break;
    case NumaPolicy::kExclusive:
      cpus = Exclusive(topology, allowed, gpu_index);
      break;
    case NumaPolicy::kCoreComplex:
      cpus = CoreComplex(topology, allowed, gpu_index);
      break;
  }
  if (cpus.empty())
    throw NumaBindingError("no CPU this agent may use is near GPU " + std::to_string(gpu_index));
  return cpus;
}

std::vector<std::set<int>> NumaBindings(const NumaTopology& topology, const std::set<int>& allowed,
                                        int local_world_size, NumaPolicy policy) {
  const std::string option = "--numa-binding=" + PolicyName(policy) + ": ";
  if (topology.gpu_nodes.empty()) {
    throw NumaBindingError(option +
                           "this host has no NVIDIA GPU (none under /sys/bus/pci/devices, or "
                           "CUDA_VISIBLE_DEVICES hides them all); workers are bound by their "
                           "GPU's NUMA node (remove the option)");
  }
  std::vector<std::set<int>> bindings;
  for (int rank = 0; rank < local_world_size; ++rank) {
    try {
      bindings.push_back(NumaCpusFor(topology, allowed, rank, policy));
    } catch (const NumaBindingError& e) {
      throw NumaBindingError(option + "local rank " + std::to_string(rank) + ": " + e.what() +
                             " (remove the option, or run one worker per GPU)");
    }
  }
  return bindings;
}

std::set<int> ParseCpuList(std::string_view text) {
  std::set<int> cpus;
  auto number = [](std::string_view s) {
    s = Strip(s);
    int value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || value < 0) {
      throw std::invalid_argument("not a CPU list entry: '" + std::string(s) + "'");
    }
    return value;
  };
  for (std::string_view part : Split(Strip(text), ',')) {
    if (Strip(part).empty()) continue;
    const auto dash = part.find('-');
    if (dash == std::string_view::npos) {
      cpus.insert(number(part));
      continue;
    }
    const int first = number(part.substr(0, dash));
    const int last = number(part.substr(dash + 1));
    for (int cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
  }
  return cpus;
}

std::string FormatCpuList(const std::set<int>& cpus) {
  std::string out;
  for (auto it = cpus.begin(); it != cpus.end();) {
    const int first = *it;
    int last = first;
    for (++it; it != cpus.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    if (last != first) out += '-' + std::to_string(last);
  }
  return out;
}

}  // namespace cpplaunch
