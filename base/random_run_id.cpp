#include "base/random_run_id.h"

#include <unistd.h>

#include <cstdio>

namespace cpplaunch {

std::string RandomRunId() {
  // The run id only has to be unique, not secret: the kernel's uuid is enough.
  std::FILE* f = std::fopen("/proc/sys/kernel/random/uuid", "r");
  char buf[64] = {};
  if (f != nullptr) {
    if (std::fgets(buf, sizeof(buf), f) == nullptr) buf[0] = '\0';
    std::fclose(f);
  }
  std::string id(buf);
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return id.empty() ? "standalone-" + std::to_string(getpid()) : id;
}

}  // namespace cpplaunch
