#include "bench/request_tally.h"

namespace cpplaunch {

void RequestTally::Count(const std::string& trace_line, int64_t now_ns) {
  const std::string prefix = "store: ";
  if (trace_line.rfind(prefix, 0) != 0) return;
  std::string what =
      trace_line.substr(prefix.size(), trace_line.rfind(" answered") - prefix.size());
  // The agents' keys and the simulation's own barrier keys.
  for (const std::string& base : {"cpplaunch/" + run_id_ + "/", "sim/" + run_id_ + "/"}) {
    if (auto at = what.find(base); at != std::string::npos) what.erase(at, base.size());
  }
  // A round's keys keep their round ("WAIT 'r1/end'"): the simulation's rounds are few, and
  // which one a request served tells the phases apart.
  std::string kind;
  bool round = false;  // in the digits of a key "r<round>/..."
  for (std::size_t i = 0; i < what.size(); ++i) {
    const char c = what[i];
    const bool is_digit = c >= '0' && c <= '9';
    round = is_digit && (round || (i >= 2 && what[i - 2] == '\'' && what[i - 1] == 'r'));
    const bool digit = is_digit && !round;
    if (digit && !kind.empty() && kind.back() == '#') continue;
    // A JSON key: no quote or backslash inside.
    kind += digit ? '#' : (c == '"' || c == '\\') ? '\'' : c;
  }
  Kind& k = kinds_[kind];
  if (k.count++ == 0) k.first_ns = now_ns;
  k.last_ns = now_ns;
}

std::string RequestTally::Json(int64_t t0_ns) const {
  const auto ms = [t0_ns](int64_t ns) { return std::to_string((ns - t0_ns) / 1'000'000); };
  std::string text = ",\"requests\":{";
  for (const auto& [kind, k] : kinds_) {
    if (text.back() != '{') text += ',';
    text += "\"" + kind + "\":[" + std::to_string(k.count) + "," + ms(k.first_ns) + "," +
            ms(k.last_ns) + "]";
  }
  return text + "}";
}

}  // namespace cpplaunch
