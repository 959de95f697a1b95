#include "launcher/diagnosis/stderr_tail.h"

#include <fstream>

namespace cpplaunch {
namespace {

constexpr std::streamoff kMaxRead = std::streamoff{16} * 1024;

std::string ReadTail(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return "";
  const std::streamoff size = file.tellg();
  const std::streamoff start = size > kMaxRead ? size - kMaxRead : 0;
  file.seekg(start);
  std::string text(static_cast<std::size_t>(size - start), '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return text;
}

}  // namespace

std::string LastLines(std::string_view text, std::size_t count) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (count == 0) return "";
  std::size_t start = text.size();
  for (std::size_t found = 0; found < count; ++found) {
    const std::size_t newline = start == 0 ? std::string_view::npos : text.rfind('\n', start - 1);
    if (newline == std::string_view::npos) return std::string(text);
    start = newline;
  }
  return std::string(text.substr(start + 1));
}

std::optional<std::string> StderrTailNote(int global_rank, const std::filesystem::path& stderr_log,
                                          std::size_t count) {
  try {
    if (stderr_log.empty()) return std::nullopt;
    const std::string tail = LastLines(ReadTail(stderr_log), count);
    if (tail.empty()) return std::nullopt;
    std::string note = "cpplaunch: rank " + std::to_string(global_rank) +
                       " wrote no error file; the last lines of its " + stderr_log.string() + ":\n";
    std::size_t begin = 0;
    while (begin <= tail.size()) {
      const std::size_t end = tail.find('\n', begin);
      note += "  " + tail.substr(begin, end == std::string::npos ? end : end - begin) + "\n";
      if (end == std::string::npos) break;
      begin = end + 1;
    }
    return note;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace cpplaunch
