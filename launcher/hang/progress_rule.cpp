#include "launcher/hang/progress_rule.h"

namespace cpplaunch {

bool Progressed(const ProgressSample& before, const ProgressSample& after,
                std::chrono::milliseconds elapsed, long ticks_per_second) {
  if (after.output_lines != before.output_lines) return true;
  const double needed = kMinCpuShare * static_cast<double>(ticks_per_second) *
                        static_cast<double>(elapsed.count()) / 1000.0;
  bool any = false;
  for (const auto& [rank, ticks] : after.cpu_ticks) {
    auto it = before.cpu_ticks.find(rank);
    if (it == before.cpu_ticks.end()) continue;
    any = true;
    const double used = ticks >= it->second ? static_cast<double>(ticks - it->second) : 0.0;
    if (used < needed) return false;
  }
  return any;
}

}  // namespace cpplaunch
