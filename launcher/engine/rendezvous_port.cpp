#include "launcher/engine/rendezvous_port.h"

#include "base/text.h"

namespace cpplaunch {

int DerivedPort(uint64_t job, uint64_t step) {
  return kDerivedPortBase + static_cast<int>(job % 1000) * 12 + static_cast<int>(step % 12);
}

uint64_t JobNumber(std::string_view job_id) {
  bool digits = !job_id.empty() && job_id.size() <= 19;
  for (char c : job_id) digits = digits && IsDigit(c);
  uint64_t value = digits ? 0 : 14695981039346656037ULL;
  for (char c : job_id) {
    if (digits) {
      value = value * 10 + static_cast<uint64_t>(c - '0');
    } else {
      value = (value ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
  }
  return value;
}

}  // namespace cpplaunch
