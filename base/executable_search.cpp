#include "base/executable_search.h"

#include <sys/stat.h>
#include <unistd.h>

namespace cpplaunch {
namespace {

std::vector<std::string> Candidates(const std::string& program, const char* path_value) {
  if (program.find('/') != std::string::npos) return {program};
  const std::string path = path_value != nullptr ? path_value : "/bin:/usr/bin";
  std::vector<std::string> candidates;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = path.find(':', start);
    const std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
    candidates.push_back(dir.empty() ? program : dir + "/" + program);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return candidates;
}

bool RegularFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

ExecutableSearch FindExecutable(const std::string& program, const char* path_value) {
  ExecutableSearch search;
  if (program.empty()) return search;
  for (const std::string& candidate : Candidates(program, path_value)) {
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
