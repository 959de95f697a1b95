#include "launcher/diagnosis/full_disk.h"

#include <unistd.h>

namespace cpplaunch {

std::optional<std::string> FullDiskNote(const std::filesystem::path& dir,
                                        std::optional<std::uintmax_t> free_bytes) {
  if (!free_bytes || *free_bytes >= kFullBelow) return std::nullopt;
  return "No space left on device: the workers' log files in " + dir.string() +
         " could not be written (" + std::to_string(*free_bytes) +
         " bytes free there); free some space, or put them elsewhere with --log-dir or TMPDIR";
}

std::optional<std::uintmax_t> FreeBytes(const std::filesystem::path& dir) {
  std::error_code ec;
  const std::filesystem::space_info space = std::filesystem::space(dir, ec);
  if (ec) return std::nullopt;
  return ::geteuid() == 0 ? space.free : space.available;
}

}  // namespace cpplaunch
