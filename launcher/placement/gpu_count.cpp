#include "launcher/placement/gpu_count.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/text.h"

namespace cpplaunch {
namespace {

// torch's _strtoul: the integer the text starts with (an optional sign, then digits), or
// -1 when it starts with none.
long long LeadingInteger(std::string_view s) {
  size_t end = 0;
  if (end < s.size() && (s[end] == '+' || s[end] == '-')) ++end;
  const size_t digits_begin = end;
  // Capped so that stoll cannot overflow; so long an ordinal is past any device count anyway.
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) && end < 18) ++end;
  if (end == digits_begin) return -1;
  const long long value = std::stoll(std::string(s.substr(digits_begin, end - digits_begin)));
  return s[0] == '-' ? -value : value;
}

// torch.cuda's rules: _parse_visible_devices hides every device when an ordinal repeats and
// ends the list at the first entry that is not one; _device_count_nvml then stops at the first
// ordinal the hardware does not have.
int CountOrdinals(std::string_view value, int physical_count) {
  std::vector<long long> ordinals;
  for (std::string_view item : Split(value, ',')) {
    const long long ordinal = LeadingInteger(Strip(item));
    if (std::find(ordinals.begin(), ordinals.end(), ordinal) != ordinals.end()) return 0;
    if (ordinal < 0) break;
    ordinals.push_back(ordinal);
  }
  for (size_t i = 0; i < ordinals.size(); ++i) {
    if (ordinals[i] >= physical_count) return static_cast<int>(i);
  }
  return static_cast<int>(ordinals.size());
}

int CountUuids(std::string_view value, std::string_view prefix, int physical_count) {
  std::vector<std::string_view> uuids;
  for (std::string_view item : Split(value, ',')) {
    if (std::find(uuids.begin(), uuids.end(), item) != uuids.end()) return 0;
    if (!item.starts_with(prefix)) break;
    uuids.push_back(item);
  }
  return std::min(static_cast<int>(uuids.size()), physical_count);
}

bool IsDeviceNode(const std::string& name) {
  constexpr std::string_view kPrefix = "nvidia";
  if (name.size() <= kPrefix.size() || !name.starts_with(kPrefix)) return false;
  return std::all_of(name.begin() + kPrefix.size(), name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// Entries of dir accepted by keep; 0 when dir cannot be read.
template <typename Keep>
int CountEntries(const std::filesystem::path& dir, Keep keep) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  int count = 0;
  for (; !ec && it != end; it.increment(ec)) {
    if (keep(it->path().filename().string())) ++count;
  }
  return count;
}

}  // namespace

int VisibleGpuCount(const std::optional<std::string>& cuda_visible_devices, int physical_count) {
  if (physical_count <= 0) return 0;
  if (!cuda_visible_devices) return physical_count;
  const std::string_view value = *cuda_visible_devices;
  if (value.starts_with("GPU-")) return CountUuids(value, "GPU-", physical_count);
  if (value.starts_with("MIG-")) return CountUuids(value, "MIG-", physical_count);
  return CountOrdinals(value, physical_count);
}

int PhysicalGpuCount() {
  // One directory per GPU, named by PCI address, while the driver is loaded.
  const int from_proc =
      CountEntries("/proc/driver/nvidia/gpus", [](const std::string&) { return true; });
  if (from_proc > 0) return from_proc;
  return CountEntries("/dev", IsDeviceNode);
}

int OnlineCpuCount() {
  const long count = sysconf(_SC_NPROCESSORS_ONLN);
  return count > 0 ? static_cast<int>(count) : 1;
}

}  // namespace cpplaunch
