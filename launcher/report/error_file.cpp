#include "launcher/report/error_file.h"

#include <charconv>
#include <fstream>
#include <iterator>

#include "base/atomic_file.h"

namespace cpplaunch {
namespace {

using Json = nlohmann::json;

// A bound on what is read: tracebacks are kilobytes; anything bigger is not an error file.
constexpr std::uintmax_t kMaxErrorFileBytes = std::uintmax_t{64} << 20;

std::string StringAt(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// torchrun writes the timestamp as a string of whole seconds (object shape) or a number.
std::optional<std::chrono::system_clock::time_point> TimestampAt(const Json& object,
                                                                 const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  long long seconds = 0;
  if (it->is_number_integer()) {
    seconds = it->get<long long>();
  } else if (it->is_number_float()) {
    seconds = static_cast<long long>(it->get<double>());
  } else if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

}  // namespace

WorkerError ParseWorkerError(std::string_view text) {
  WorkerError error;
  Json document = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) return error;
  error.data = std::move(document);
  const Json& data = error.data;
  auto message = data.find("message");
  if (message == data.end()) return error;
  if (message->is_string()) {
    error.message = message->get<std::string>();
    error.timestamp = TimestampAt(data, "timestamp");
  } else if (message->is_object()) {
    error.message = StringAt(*message, "message");
    auto extra = message->find("extraInfo");
    if (extra != message->end()) {
      error.traceback = StringAt(*extra, "py_callstack");
      error.timestamp = TimestampAt(*extra, "timestamp");
    }
  }
  return error;
}

std::optional<WorkerError> ReadWorkerError(const std::filesystem::path& path) {
  if (path.empty()) return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  // A file that exists but cannot be used still counts as written, so the summary names its
  // path for the user to look at.
  if (ec || size > kMaxErrorFileBytes) return WorkerError{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return WorkerError{};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseWorkerError(text);
}

void WriteErrorFile(const std::filesystem::path& path, const nlohmann::json& document) {
  // Invalid UTF-8 copied from a worker's file must not make the dump throw.
  const std::string text = document.dump(-1, ' ', false, Json::error_handler_t::replace);
  // The agent's parent may read the file while it is written (a scheduler polling for it).
  ReplaceFile(path, text);
}

}  // namespace cpplaunch
