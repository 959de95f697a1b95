#include "launcher/watchdog/timer_request.h"

#include <catch2/catch.hpp>

namespace cpplaunch {

// The lines torch's FileTimerRequest.to_json() writes (json.dumps: ", " and ": ").
TEST_CASE("ParseTimerRequest reads torch's acquire and release lines", "[launcher][watchdog]") {
  std::string error;
  auto acquire = ParseTimerRequest(
      R"({"version": 1, "pid": 4242, "scope_id": "train.py#42", "expiration_time": 1700000000.25, "signal": 9})",
      &error);
  REQUIRE(acquire);
  CHECK(acquire->pid == 4242);
  CHECK(acquire->scope_id == "train.py#42");
  CHECK(acquire->expiration_time == 1700000000.25);
  CHECK(acquire->signal == 9);
  CHECK_FALSE(acquire->release());

  auto release = ParseTimerRequest(
      R"({"version": 1, "pid": 4242, "scope_id": "train.py#42", "expiration_time": -1, "signal": 0})",
      &error);
  REQUIRE(release);
  CHECK(release->release());
  CHECK(release->signal == 0);
}

TEST_CASE("ParseTimerRequest: a negative signal means none", "[launcher][watchdog]") {
  auto request = ParseTimerRequest(
      R"({"pid": 7, "scope_id": "s", "expiration_time": 5, "signal": -15})", nullptr);
  REQUIRE(request);
  CHECK(request->signal == 0);
}

TEST_CASE("ParseTimerRequest refuses what is not torch's request", "[launcher][watchdog]") {
  std::string error;
  CHECK_FALSE(ParseTimerRequest("hello", &error));
  CHECK(error == "not JSON");
  CHECK_FALSE(ParseTimerRequest("[1, 2]", &error));
  CHECK(error == "not a JSON object");
  CHECK_FALSE(ParseTimerRequest(R"({"scope_id": "s", "expiration_time": 1, "signal": 9})", &error));
  CHECK(error == "no integer \"pid\"");
  CHECK_FALSE(ParseTimerRequest(
      R"({"pid": "1", "scope_id": "s", "expiration_time": 1, "signal": 9})", &error));
  CHECK_FALSE(
      ParseTimerRequest(R"({"pid": 3, "scope_id": 5, "expiration_time": 1, "signal": 9})", &error));
  CHECK(error == "no string \"scope_id\"");
  CHECK_FALSE(ParseTimerRequest(
      R"({"pid": 3, "scope_id": "s", "expiration_time": "x", "signal": 9})", &error));
  CHECK(error == "no number \"expiration_time\"");
  CHECK_FALSE(ParseTimerRequest(
      R"({"pid": 3, "scope_id": "s", "expiration_time": 1, "signal": 9.5})", &error));
  CHECK(error == "no integer \"signal\"");
  CHECK_FALSE(ParseTimerRequest(
      R"({"pid": -3, "scope_id": "s", "expiration_time": 1, "signal": 9})", &error));
  CHECK(error == "\"pid\" out of range");
  CHECK_FALSE(ParseTimerRequest(
      R"({"pid": 3, "scope_id": "s", "expiration_time": 1, "signal": 99})", &error));
  CHECK(error == "\"signal\" out of range");
  // Python writes NaN unquoted; it is no JSON, and a timer that never compares is refused.
  CHECK_FALSE(ParseTimerRequest(
      R"({"pid": 3, "scope_id": "s", "expiration_time": NaN, "signal": 9})", &error));
}

}  // namespace cpplaunch
