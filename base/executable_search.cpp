#include "base/executable_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace cpplaunch {
namespace {

bool RegularFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

std::vector<std::string> ExecCandidates(const std::string& program, const char* path_value) {
  if (program.find('/') != std::string::npos) return {program};
  const std::string path = path_value != nullptr ? path_value : "/bin:/usr/bin";
  std::vector<std::string> candidates;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = path.find(':', start);
    std::string candidate = path.substr(start, colon == std::string::npos ? colon : colon - start);
    if (candidate.empty()) {
      candidate = program;
    } else {
      candidate.append("/").append(program);
    }
    candidates.push_back(std::move(candidate));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return candidates;
}

ExecutableSearch FindExecutable(const std::string& program, const char* path_value) {
  ExecutableSearch search;
  if (program.empty()) return search;
  for (const std::string& candidate : ExecCandidates(program, path_value)) {
    if (!RegularFile(candidate)) continue;
    if (::access(candidate.c_str(), X_OK) == 0) {
      search.found = candidate;
      search.not_executable.clear();
      return search;
    }
    search.not_executable.push_back(candidate);
  }
  return search;
}

}  // namespace cpplaunch
