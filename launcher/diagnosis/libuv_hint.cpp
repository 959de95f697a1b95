#include "launcher/diagnosis/libuv_hint.h"

#include <algorithm>
#include <fstream>
#include <system_error>

namespace cpplaunch {
namespace {

constexpr std::streamoff kTailBytes = std::streamoff{64} * 1024;

std::string FileTail(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return "";
  std::ifstream in(path, std::ios::binary);
  const auto start = std::max<std::streamoff>(0, static_cast<std::streamoff>(size) - kTailBytes);
  in.seekg(start);
  std::string text(static_cast<size_t>(static_cast<std::streamoff>(size) - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  return text;
}

}  // namespace

std::optional<std::string> LibuvHint(const std::vector<std::string>& failure_texts,
                                     WorkerStore worker_store) {
  if (failure_texts.empty()) return std::nullopt;
  for (const std::string& text : failure_texts) {
    if (text.find(kLibuvMissing) == std::string::npos) return std::nullopt;
  }
  if (worker_store == WorkerStore::kRank0) {
    return "every worker failed because this PyTorch has no libuv: set USE_LIBUV=0 in "
           "cpplaunch's environment (see docs/compatibility.md)";
  }
  return "every worker failed because this PyTorch has no libuv but asks for it on the agent's "
         "store: run with --worker-store=rank0 and USE_LIBUV=0 (see docs/compatibility.md)";
}

std::string FailureText(const WorkerFailure& failure, const std::filesystem::path& stderr_log) {
  try {
    std::string text;
    if (failure.error) text = failure.error->message + "\n" + failure.error->traceback + "\n";
    return text + FileTail(stderr_log);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace cpplaunch
