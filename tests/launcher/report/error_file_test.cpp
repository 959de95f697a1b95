#include "launcher/report/error_file.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace cpplaunch {
namespace fs = std::filesystem;
using std::chrono::seconds;
using std::chrono::system_clock;

TEST_CASE("ParseWorkerError reads torchrun's @record shape", "[launcher][error_file]") {
  const WorkerError e = ParseWorkerError(
      R"({"message": {"message": "ValueError: bad", "extraInfo": {"py_callstack": "Traceback:\nValueError: bad\n", "timestamp": "1714564801"}}})");
  CHECK(e.message == "ValueError: bad");
  CHECK(e.traceback == "Traceback:\nValueError: bad\n");
  REQUIRE(e.timestamp);
  CHECK(*e.timestamp == system_clock::time_point(seconds(1714564801)));
  CHECK(e.data.is_object());
}

TEST_CASE("ParseWorkerError reads the newer string-message shape", "[launcher][error_file]") {
  const WorkerError e = ParseWorkerError(R"({"message": "it broke", "timestamp": 1714564802})");
  CHECK(e.message == "it broke");
  CHECK(e.traceback.empty());
  REQUIRE(e.timestamp);
  CHECK(*e.timestamp == system_clock::time_point(seconds(1714564802)));
}

TEST_CASE("ParseWorkerError tolerates garbage, missing keys and wrong types",
          "[launcher][error_file]") {
  for (const char* text :
       {"", "not json", "[1,2]", "{\"message\": 3}", "{}", "{\"message\": {}}",
        "{\"message\": {\"message\": 1, \"extraInfo\": \"x\"}}",
        "{\"message\": {\"extraInfo\": {\"timestamp\": \"soon\"}}}",
        "{\"message\": \"m\", \"timestamp\": \"12x\"}", "{\"message\": {\"mess"}) {
    INFO(text);
    const WorkerError e = ParseWorkerError(text);
    CHECK(e.traceback.empty());
    CHECK_FALSE(e.timestamp);
  }
  CHECK(ParseWorkerError("{\"message\": {\"message\": \"only\"}}").message == "only");
  CHECK(ParseWorkerError("{\"message\": \"m\", \"timestamp\": \"17\"}").timestamp ==
        system_clock::time_point(seconds(17)));
}

TEST_CASE("ReadWorkerError distinguishes no file from an unreadable one",
          "[launcher][error_file]") {
  const fs::path dir =
      fs::temp_directory_path() / ("error_file_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  CHECK_FALSE(ReadWorkerError(""));
  CHECK_FALSE(ReadWorkerError(dir / "missing.json"));
  CHECK_FALSE(ReadWorkerError(dir));
  std::ofstream(dir / "garbage.json") << "{{{";
  auto garbage = ReadWorkerError(dir / "garbage.json");
  REQUIRE(garbage);
  CHECK(garbage->message.empty());
  std::ofstream(dir / "good.json") << R"({"message": "m", "timestamp": 5})";
  CHECK(ReadWorkerError(dir / "good.json")->message == "m");
  fs::remove_all(dir);
}

TEST_CASE("WriteErrorFile replaces an existing file with the JSON document",
          "[launcher][error_file]") {
  const fs::path dir = fs::temp_directory_path() / ("error_file_w_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / "agent.json";
  std::ofstream(path) << "old contents that are longer than the new ones, much longer indeed";
  WriteErrorFile(path, nlohmann::json{{"message", "new"}, {"bad", std::string("\xff\xfe")}});
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const auto parsed = nlohmann::json::parse(text.str());
  CHECK(parsed["message"] == "new");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  CHECK_THROWS_AS(WriteErrorFile(dir / "no" / "such" / "dir.json", nlohmann::json::object()),
                  std::system_error);
  fs::remove_all(dir);
}

}  // namespace cpplaunch
