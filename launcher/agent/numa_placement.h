#pragma once
// --numa-binding as the agent applies it: each local rank's CPUs, computed once before the first
// attempt from the host's topology (numa_topology.h) and policy (numa_binding.h), so that a
// worker's child only calls sched_setaffinity.
// Threads: the agent's thread; Bind before the loop runs, CpusFor at each spawn.

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "launcher/cli/options.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class NumaPlacement {
 public:
  // Reads the topology when `options` ask for --numa-binding, and says each rank's CPUs through
  // `info`. Returns the error line when the option is invalid or the host cannot satisfy it.
  std::optional<std::string> Bind(const LaunchOptions& options, const EnvMap& env,
                                  const std::function<void(const std::string&)>& info);

  // A local rank's CPUs; empty (the agent's own affinity) without the option.
  std::vector<int> CpusFor(int local_rank) const;

 private:
  std::vector<std::set<int>> cpus_;  // by local rank; empty = no binding
};

}  // namespace cpplaunch
