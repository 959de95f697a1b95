#include "launcher/watchdog/timer_request.h"

#include <nlohmann/json.hpp>

namespace cpplaunch {
namespace {

using Json = nlohmann::json;

bool Fail(std::string* error, std::string text) {
  if (error) *error = std::move(text);
  return false;
}

bool ReadFields(const Json& json, TimerRequest& request, std::string* error) {
  if (!json.is_object()) return Fail(error, "not a JSON object");
  auto pid = json.find("pid");
  auto scope = json.find("scope_id");
  auto expiration = json.find("expiration_time");
  auto signal = json.find("signal");
  if (pid == json.end() || !pid->is_number_integer()) return Fail(error, "no integer \"pid\"");
  if (scope == json.end() || !scope->is_string()) return Fail(error, "no string \"scope_id\"");
  if (expiration == json.end() || !expiration->is_number())
    return Fail(error, "no number \"expiration_time\"");
  if (signal == json.end() || !signal->is_number_integer())
    return Fail(error, "no integer \"signal\"");
  const auto pid_value = pid->get<long long>();
  if (pid_value <= 0 || pid_value > 0x3fffffff) return Fail(error, "\"pid\" out of range");
  const auto signal_value = signal->get<long long>();
  if (signal_value > 64) return Fail(error, "\"signal\" out of range");
  request.pid = static_cast<int>(pid_value);
  request.scope_id = scope->get<std::string>();
  request.expiration_time = expiration->get<double>();
  request.signal = signal_value < 0 ? 0 : static_cast<int>(signal_value);
  return true;
}

}  // namespace

std::optional<TimerRequest> ParseTimerRequest(std::string_view line, std::string* error) {
  // Python's json.dumps writes NaN and Infinity unquoted; nlohmann rejects them, and so a
  // timer that could never be compared is refused here.
  Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    Fail(error, "not JSON");
    return std::nullopt;
  }
  TimerRequest request;
  if (!ReadFields(json, request, error)) return std::nullopt;
  return request;
}

}  // namespace cpplaunch
