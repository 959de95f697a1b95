#include "rendezvous/store/refusal_log.h"

namespace cpplaunch {

std::optional<std::string> RefusalLog::Admit(std::string line, Clock::time_point now) {
  if (last_ && now - *last_ < kInterval) {
    ++suppressed_;
    return std::nullopt;
  }
  last_ = now;
  if (suppressed_ > 0) {
    line += " (" + std::to_string(suppressed_) + " more refusal" + (suppressed_ == 1 ? "" : "s") +
            " not shown)";
    suppressed_ = 0;
  }
  return line;
}

}  // namespace cpplaunch
