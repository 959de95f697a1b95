#pragma once
// Counting NVIDIA GPUs without CUDA libraries, for --nproc-per-node gpu/auto.
//
// VisibleGpuCount is pure: it applies CUDA_VISIBLE_DEVICES to a physical device count the
// way torch.cuda.device_count() does (torch.cuda._parse_visible_devices):
//   unset                      -> the physical count
//   "" or no valid entry       -> 0
//   "0,2,x,3"                  -> entries up to the first invalid one (each parsed like
//                                 strtoul: "1gpu" is 1; a negative or non-number ends the list)
//   a repeated entry           -> 0
//   an index >= physical count -> the list is cut there ("0,7,1" with 2 GPUs -> 1)
//   "GPU-<uuid>,..."/"MIG-..." -> one device per entry carrying the prefix, up to the first
//                                 that does not (UUIDs cannot be checked without NVML), at
//                                 most the physical count
// PhysicalGpuCount and OnlineCpuCount read the system (/proc/driver/nvidia/gpus/, else
// /dev/nvidia<N>; sysconf(_SC_NPROCESSORS_ONLN) like Python's os.cpu_count()). They do not
// throw; an unreadable system counts as 0 GPUs / 1 CPU.

#include <optional>
#include <string>

namespace cpplaunch {

int VisibleGpuCount(const std::optional<std::string>& cuda_visible_devices, int physical_count);

int PhysicalGpuCount();
int OnlineCpuCount();

}  // namespace cpplaunch
