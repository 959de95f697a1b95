#include "launcher/hang/hang_setup.h"

#include <algorithm>
#include <string>

namespace cpplaunch {

void PrepareForHangWatch(WorkerSpec& spec) {
  const bool user_set = std::any_of(spec.env.begin(), spec.env.end(), [](const std::string& e) {
    return e.rfind("PYTHONFAULTHANDLER=", 0) == 0;
  });
  if (!user_set) spec.env.push_back("PYTHONFAULTHANDLER=1");
  RouteThroughAgent(spec.streams);
}

}  // namespace cpplaunch
