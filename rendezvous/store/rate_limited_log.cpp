#include "rendezvous/store/rate_limited_log.h"

namespace cpplaunch {

std::optional<std::string> RateLimitedLog::Admit(Clock::time_point now, const std::string& line) {
  if (last_ && now - *last_ < interval_) {
    ++held_back_;
    return std::nullopt;
  }
  std::string text = line;
  if (held_back_ > 0) {
    text += " (and " + std::to_string(held_back_) + " more since the last such message)";
  }
  held_back_ = 0;
  last_ = now;
  return text;
}

}  // namespace cpplaunch
