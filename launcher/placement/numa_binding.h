#pragma once
// --numa-binding: which CPUs each worker is bound to, by newest torchrun's four policies
// (torch/numa/binding.py), computed in the agent before the spawn. Pure: the machine comes in as
// a NumaTopology (numa_topology.h reads it from sysfs), the agent's own affinity as a set.
//
// For the GPU whose CUDA index is the worker's local rank (its PCI device's NUMA node; -1 read
// as node 0, as torch does), with every CPU set intersected with `allowed` (the agent's
// affinity):
//   node          every CPU of the GPU's NUMA node
//   socket        every CPU of every NUMA node on the GPU's socket (the package of the node's
//                 lowest allowed CPU)
//   exclusive     the node's physical cores (grouped by thread siblings, in order of their lowest
//                 CPU) split evenly among the node's GPUs in index order; the lowest GPUs get
//                 one extra core when the split is uneven
//   core-complex  the node's CPUs grouped by their largest data/unified cache (an L3 complex);
//                 complexes ordered by size (largest first), then lowest CPU; the GPU's position
//                 among the node's GPUs, modulo the number of complexes, picks one
// Errors: NumaBindingError with one line saying what is missing and what to do.

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

enum class NumaPolicy { kNode, kSocket, kExclusive, kCoreComplex };

// "node", "socket", "exclusive", "core-complex"; nullopt for anything else.
std::optional<NumaPolicy> ParseNumaPolicy(std::string_view text);

// The parts of a machine's topology the policies read.
struct NumaTopology {
  std::set<int> nodes;                          // NUMA nodes (node/possible)
  std::map<int, std::set<int>> node_cpus;       // node -> its CPUs (node<N>/cpulist)
  std::map<int, int> cpu_package;               // cpu -> socket (physical_package_id)
  std::map<int, std::set<int>> cpu_siblings;    // cpu -> CPUs of its core (thread_siblings_list)
  std::map<int, std::set<int>> cpu_last_cache;  // cpu -> CPUs sharing its largest cache
  std::vector<int> gpu_nodes;  // CUDA index -> NUMA node of the GPU (already max(n, 0))
};

class NumaBindingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The CPUs the worker using GPU `gpu_index` is bound to. Never empty: an empty result throws.
std::set<int> NumaCpusFor(const NumaTopology& topology, const std::set<int>& allowed, int gpu_index,
                          NumaPolicy policy);

// One CPU set per local rank 0..local_world_size-1 (GPU index = local rank), or the error line
// ("--numa-binding=node: ...; remove the option ...").
std::vector<std::set<int>> NumaBindings(const NumaTopology& topology, const std::set<int>& allowed,
                                        int local_world_size, NumaPolicy policy);

// sysfs's list format, "0-2,4,6-7" <-> {0,1,2,4,6,7}. Parse throws std::invalid_argument.
std::set<int> ParseCpuList(std::string_view text);
std::string FormatCpuList(const std::set<int>& cpus);

}  // namespace cpplaunch
