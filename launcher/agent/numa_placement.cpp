#include "launcher/agent/numa_placement.h"

#include "launcher/placement/numa_binding.h"
#include "launcher/placement/numa_topology.h"
#include "launcher/process/posix_sys.h"

namespace cpplaunch {

std::optional<std::string> NumaPlacement::Bind(
    const LaunchOptions& options, const EnvMap& env,
    const std::function<void(const std::string&)>& info) {
  if (!options.numa_binding) return std::nullopt;
  const std::optional<NumaPolicy> policy = ParseNumaPolicy(*options.numa_binding);
  if (!policy) return "--numa-binding: invalid choice '" + *options.numa_binding + "'";
  const std::vector<int> affinity = posix::CurrentCpuAffinity();
  const std::set<int> allowed(affinity.begin(), affinity.end());
  try {
    const NumaTopology topology =
        ReadNumaTopology("/sys", allowed, Lookup(env, "CUDA_VISIBLE_DEVICES"));
    cpus_ = NumaBindings(topology, allowed, options.nproc_per_node, *policy);
  } catch (const NumaBindingError& e) {
    return std::string(e.what());
  }
  for (std::size_t rank = 0; rank < cpus_.size(); ++rank) {
    info("local rank " + std::to_string(rank) + " bound to CPUs " + FormatCpuList(cpus_[rank]) +
         " (--numa-binding=" + *options.numa_binding + ")");
  }
  return std::nullopt;
}

std::vector<int> NumaPlacement::CpusFor(int local_rank) const {
  const auto rank = static_cast<std::size_t>(local_rank);
  if (rank >= cpus_.size()) return {};
  return {cpus_[rank].begin(), cpus_[rank].end()};
}

}  // namespace cpplaunch
