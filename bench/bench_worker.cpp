// The worker program the process benchmarks launch (always with --no-python / --no_python).
//
//   bench_worker fail-or-sleep FAIL_RANK DELAY_MS STAMP_FILE
//       The worker whose LOCAL_RANK equals FAIL_RANK sleeps DELAY_MS, writes the CLOCK_MONOTONIC
//       time (ns) of its failure to STAMP_FILE and exits with status 1. Every other worker sleeps
//       until a signal ends it (default dispositions), as a sibling blocked in a collective would.
//   bench_worker write BYTES [STAMP_FILE]
//       Writes its start time to STAMP_FILE (if given), then BYTES bytes of 100-byte text lines
//       to stdout in 64 KiB writes, then exits 0.
//   bench_worker stamp DIR
//       Writes its CLOCK_MONOTONIC start time (ns) to DIR/<RANK> and exits 0.
//   bench_worker stamp-then-fail-or-sleep DIR FAIL_RANK DELAY_MS STAMP_FILE
//       stamp, then fail-or-sleep with RANK (global) instead of LOCAL_RANK.
//
// Monotonic time is system-wide on Linux, so the harness can compare these stamps with its own.
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

long EnvNumber(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? -1 : std::strtol(value, nullptr, 10);
}

void WriteStamp(const std::string& path, std::int64_t ns) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::perror(path.c_str());
    std::_Exit(3);
  }
  std::fprintf(f, "%lld\n", static_cast<long long>(ns));
  std::fclose(f);
}

[[noreturn]] void FailOrSleep(long my_rank, long fail_rank, long delay_ms, const char* stamp_file) {
  if (my_rank != fail_rank) {
    for (;;) pause();
  }
  timespec delay{delay_ms / 1000, (delay_ms % 1000) * 1'000'000};
  while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
  }
  WriteStamp(stamp_file, MonotonicNs());
  std::_Exit(1);
}

int WriteLines(long long total) {
  constexpr std::size_t kLine = 100;
  std::vector<char> block(64 * 1024 / kLine * kLine);
  for (std::size_t i = 0; i < block.size(); i += kLine) {
    std::memset(&block[i], 'x', kLine - 1);
    // A line number at the front makes every line distinct: "0000000042 xxx...x\n".
    const std::string number = std::to_string(1'000'000'000 + i / kLine).substr(1);
    std::memcpy(&block[i], number.data(), number.size());
    block[i + number.size()] = ' ';
    block[i + kLine - 1] = '\n';
  }
  long long left = total;
  while (left > 0) {
    const std::size_t n =
        left < static_cast<long long>(block.size()) ? static_cast<std::size_t>(left) : block.size();
    std::size_t off = 0;
    while (off < n) {
      const ssize_t w = write(STDOUT_FILENO, block.data() + off, n - off);
      if (w < 0) {
        if (errno == EINTR) continue;
        std::perror("write");
        return 1;
      }
      off += static_cast<std::size_t>(w);
    }
    left -= static_cast<long long>(n);
  }
  return 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: bench_worker fail-or-sleep FAIL_RANK DELAY_MS STAMP_FILE\n"
               "       bench_worker write BYTES [STAMP_FILE]\n"
               "       bench_worker stamp DIR\n"
               "       bench_worker stamp-then-fail-or-sleep DIR FAIL_RANK DELAY_MS STAMP_FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t start = MonotonicNs();
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  if (mode == "fail-or-sleep" && argc == 5) {
    FailOrSleep(EnvNumber("LOCAL_RANK"), std::atol(argv[2]), std::atol(argv[3]), argv[4]);
  }
  if (mode == "write" && (argc == 3 || argc == 4)) {
    if (argc == 4) WriteStamp(argv[3], start);
    return WriteLines(std::atoll(argv[2]));
  }
  if ((mode == "stamp" && argc == 3) || (mode == "stamp-then-fail-or-sleep" && argc == 6)) {
    WriteStamp(std::string(argv[2]) + "/" + std::to_string(EnvNumber("RANK")), start);
    if (mode == "stamp") return 0;
    FailOrSleep(EnvNumber("RANK"), std::atol(argv[3]), std::atol(argv[4]), argv[5]);
  }
  return Usage();
}
