#pragma once
// A run id that only has to be unique, not secret: the kernel's uuid4, as Python prints one
// (the run id of --standalone, and the suffix of the watchdog's default FIFO).

#include <string>

namespace cpplaunch {

// "standalone-<pid>" when /proc/sys/kernel/random/uuid cannot be read.
std::string RandomRunId();

}  // namespace cpplaunch
