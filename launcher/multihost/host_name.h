#pragma once
// This host's fully qualified name (host_info.h), resolved at its first use: a resolver call,
// possibly DNS, that a run which never names its host does not pay for. Shared by the agent (a
// multi-host job's records) and its listeners (failure records, events).
// Threads: the agent's loop thread.

#include <string>

#include "launcher/multihost/host_info.h"

namespace cpplaunch {

class HostName {
 public:
  const std::string& get() {
    if (name_.empty()) name_ = FullyQualifiedHostName();
    return name_;
  }

 private:
  std::string name_;
};

}  // namespace cpplaunch
