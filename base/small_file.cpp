#include "base/small_file.h"

#include <fcntl.h>

#include <algorithm>

#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace cpplaunch {

std::optional<std::string> ReadSmallFile(const std::string& path, std::size_t limit) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string text;
  char chunk[4096];
  while (text.size() < limit) {
    const IoResult r = ReadSome(fd.get(), chunk, std::min(sizeof(chunk), limit - text.size()));
    if (r.status == IoResult::Status::kEof) break;
    if (!r.ok()) return std::nullopt;
    text.append(chunk, r.bytes);
  }
  return text;
}

}  // namespace cpplaunch
