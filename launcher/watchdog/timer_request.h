#pragma once
// One line of torchrun's file-timer protocol, as torch's FileTimerClient writes it to the
// watchdog FIFO (TORCHELASTIC_TIMER_FILE): a JSON object per line,
//   {"version": 1, "pid": 123, "scope_id": "train.py#42", "expiration_time": 1700000000.5,
//    "signal": 9}
// expiration_time is wall-clock seconds since the epoch (Python's time.time() + after); a
// negative one releases the scope. Pure: no I/O, no clock.

#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

struct TimerRequest {
  int pid = 0;
  std::string scope_id;
  double expiration_time = 0;  // epoch seconds; < 0 = release
  int signal = 0;              // <= 0: the timer expires without killing anybody

  bool release() const { return expiration_time < 0; }
};

// Parses one line (without its newline). nullopt with *error for anything else than an object
// with an integer "pid", a string "scope_id", a number "expiration_time" and an integer
// "signal" (the fields torch's FileTimerServer reads; others such as "version" are ignored).
std::optional<TimerRequest> ParseTimerRequest(std::string_view line, std::string* error);

}  // namespace cpplaunch
