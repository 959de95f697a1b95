// Test worker for WorkerOutput: writes numbered lines as fast as it can.
//   output_writer <tag> <lines> <width> [out|err|both] [partial-tail]
// Line i is "<tag> <i, 9 digits> xxx...x\n", `width` bytes including the newline (at least the
// header). With a partial tail, that text is written last without a newline and the process
// kills itself with SIGKILL, as a crashing worker would.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) std::exit(3);
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: output_writer <tag> <lines> <width> [out|err|both] [tail]\n");
    return 2;
  }
  const std::string tag = argv[1];
  const long lines = std::atol(argv[2]);
  const std::size_t width = static_cast<std::size_t>(std::atol(argv[3]));
  const std::string where = argc > 4 ? argv[4] : "out";
  std::string buffer;
  buffer.reserve(1 << 20);
  char number[16];
  auto flush = [&] {
    if (where != "err") WriteAll(1, buffer.data(), buffer.size());
    if (where != "out") WriteAll(2, buffer.data(), buffer.size());
    buffer.clear();
  };
  for (long i = 0; i < lines; ++i) {
    std::snprintf(number, sizeof(number), " %09ld ", i);
    const std::size_t start = buffer.size();
    buffer += tag;
    buffer += number;
    if (buffer.size() - start + 1 < width) buffer.append(width - 1 - (buffer.size() - start), 'x');
    buffer += '\n';
    if (buffer.size() >= (1 << 20) - 4096) flush();
  }
  flush();
  if (argc > 5) {
    buffer = argv[5];
    flush();
    std::raise(SIGKILL);
  }
  return 0;
}
