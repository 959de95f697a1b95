#pragma once
// Tells a kernel OOM kill from any other SIGKILL: the OOM-kill counters of the memory cgroups
// holding the workers (memory_cgroup.h), read when an attempt starts and again when a worker
// dies of a SIGKILL. Each kill the counters gained since the start explains one such death, in
// the order the deaths are seen. Reads files only (proc_reader.h); never throws.
// Threads: the agent's loop thread.
//
// A limit of the method: an OOM kill of some other process in the same cgroup (a worker's data
// loader child, say) also moves the counter, so a worker killed from outside right after it
// would be taken for an OOM victim; the counter cannot name its victim.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "launcher/diagnosis/exit_explanation.h"
#include "launcher/diagnosis/memory_cgroup.h"

namespace cpplaunch {

struct OomVerdict {
  bool counter_read = false;   // some memory cgroup's counter could be read
  std::optional<OomKill> oom;  // set when a new OOM kill explains this death
};

class OomWatch {
 public:
  // Finds the memory cgroups of `pids` (the attempt's workers, just started) and remembers
  // their counters. Forgets the previous attempt's.
  void Baseline(const std::vector<pid_t>& pids);

  // A worker died of a SIGKILL: reads the counters again; a kill not yet attributed makes this
  // death an OOM kill, with that cgroup's limit and peak.
  OomVerdict Check();

 private:
  struct Watched {
    std::filesystem::path dir;  // where the counter file is
    CgroupVersion version = CgroupVersion::kV2;
    std::uint64_t attributed = 0;  // the baseline, plus the kills already explained
  };
  std::vector<Watched> watched_;
};

}  // namespace cpplaunch
