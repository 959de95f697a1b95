#pragma once
// Reads the NumaTopology (numa_binding.h) of a machine from sysfs, through one root directory
// so that tests describe synthetic machines in a temporary tree laid out like /sys:
//   <root>/devices/system/node/possible, node<N>/cpulist
//   <root>/devices/system/cpu/cpu<N>/topology/{physical_package_id,thread_siblings_list}
//   <root>/devices/system/cpu/cpu<N>/cache/index<K>/{type,level,shared_cpu_list}
//   <root>/bus/pci/devices/<address>/{vendor,class,numa_node}
// GPUs are the NVIDIA display controllers (vendor 0x10de, class 0x03xxxx) in PCI address order,
// which is CUDA's order with CUDA_DEVICE_ORDER=PCI_BUS_ID and, for identical GPUs, its default;
// an ordinal CUDA_VISIBLE_DEVICES list renumbers them as CUDA does. Only the CPUs in `cpus`
// (the agent's affinity) are read, as torch reads only those. Missing or unreadable files leave
// their entries out (NumaCpusFor then names what is unknown). Throws NumaBindingError only for a
// CUDA_VISIBLE_DEVICES of GPU UUIDs, which cannot be mapped to PCI devices without NVML.

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "launcher/placement/numa_binding.h"

namespace cpplaunch {

NumaTopology ReadNumaTopology(const std::filesystem::path& sysfs_root, const std::set<int>& cpus,
                              const std::optional<std::string>& cuda_visible_devices);

}  // namespace cpplaunch
