#include "launcher/output/log_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <system_error>
#include <vector>

#include "base/crypto/random_bytes.h"
#include "base/fd_io.h"

namespace cpplaunch {
namespace fs = std::filesystem;
namespace {

// Python's mkdtemp: <prefix> + 8 characters from its alphabet, mode 0700, retried on a clash.
fs::path MakeUniqueDir(const fs::path& parent, const std::string& prefix) {
  static constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789_";
  // A plain PRNG is enough: mkdir fails on an existing path, so a guessed or clashing name is
  // retried, never shared with another process. Seeded by getrandom(2): std::random_device
  // probes the CPU with cpuid first, which a virtual machine traps (tens of microseconds).
  std::uint64_t seed = 0;
  const std::string bytes = RandomBytes(sizeof(seed));
  std::memcpy(&seed, bytes.data(), sizeof(seed));
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = prefix;
    for (int i = 0; i < 8; ++i) name += kAlphabet[pick(random)];
    fs::path candidate = parent / name;
    // mkdir(2) for mode 0700 (create_directory would make 0777 less the umask), as mkdtemp.
    if (::mkdir(candidate.c_str(), 0700) == 0) return candidate;
    const int err = LastError();
    if (err != EEXIST) throw SystemError(err, "mkdir " + candidate.string());
  }
  throw SystemError(EEXIST, "no unique directory name under " + parent.string());
}

// A std::system_error whose what() is the whole operator's line: std::system_error appends
// the reason last, after which "what to do" could not follow.
class LogDirError : public std::system_error {
 public:
  LogDirError(std::error_code code, std::string line)
      : std::system_error(code), line_(std::move(line)) {}
  const char* what() const noexcept override { return line_.c_str(); }

 private:
  std::string line_;
};

// One line naming the option, what could not be made and why, and the way out; the raw
// "filesystem error: cannot create directories" names none of them.
[[noreturn]] void ThrowLogDirError(const std::string& base, const std::string& problem,
                                   std::error_code code) {
  throw LogDirError(code, "--log-dir " + base + ": " + problem + ": " + code.message() +
                              "; give a directory you can write to, or --log-dir=" +
                              std::string(LogDir::kDisabled) + " for no log files");
}

}  // namespace

LogDir LogDir::Create(const std::string& base, std::string_view run_id, const fs::path& temp_root) {
  if (base == kDisabled) {
    try {
      return LogDir({}, {}, MakeUniqueDir(temp_root, "cpplaunch_errors_"));
    } catch (const std::system_error&) {
      return LogDir({}, {}, {});  // no writable temp directory: no error files, as torchrun
    }
  }
  if (base.empty()) {
    const fs::path temp_base = MakeUniqueDir(temp_root, "torchelastic_");
    try {
      return LogDir(MakeUniqueDir(temp_base, std::string(run_id) + "_"), temp_base, {});
    } catch (...) {
      ::rmdir(temp_base.c_str());  // made for this run only: nothing left behind
      throw;
    }
  }
  const fs::path root = base;
  std::error_code ec;
  if (fs::exists(root, ec) && !fs::is_directory(root, ec)) {
    ThrowLogDirError(base, "it is a file", std::make_error_code(std::errc::not_a_directory));
  }
  try {
    fs::create_directories(root);
  } catch (const fs::filesystem_error& e) {
    ThrowLogDirError(base, "cannot create " + e.path1().string(), e.code());
  }
  try {
    return LogDir(MakeUniqueDir(root, std::string(run_id) + "_"), {}, {});
  } catch (const std::system_error& e) {
    ThrowLogDirError(base, "cannot create the run's directory in it", e.code());
  }
}

bool LogDir::HoldsFiles() const {
  if (!enabled()) return false;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(run_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) return true;
  }
  return false;
}

void LogDir::CleanUpAtExit() const {
  std::error_code ec;
  if (!error_dir_.empty()) fs::remove_all(error_dir_, ec);
  if (!enabled() || temp_base_.empty()) return;
  // One walk (it is on the way out of every job): the directories, parents first, unless a
  // file turns up; then rmdir each, children first (the walk's order reversed).
  std::vector<fs::path> dirs{run_dir_};
  for (fs::recursive_directory_iterator it(run_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) return;
    dirs.push_back(it->path());
  }
  if (ec) return;
  for (auto dir = dirs.rbegin(); dir != dirs.rend(); ++dir) ::rmdir(dir->c_str());
  ::rmdir(temp_base_.c_str());  // only if empty
}

fs::path LogDir::TempRoot() {
  for (const char* name : {"TMPDIR", "TEMP", "TMP"}) {
    const char* value = std::getenv(name);
    std::error_code ec;
    if (value != nullptr && *value != '\0' && fs::is_directory(value, ec)) return value;
  }
  return "/tmp";
}

void LogDir::PrepareAttempt(int restart_count, int local_world_size) const {
  if (!enabled() && error_dir_.empty()) return;
  const fs::path attempt = enabled() ? AttemptDir(restart_count) : ErrorAttemptDir(restart_count);
  fs::remove_all(attempt);
  fs::create_directory(attempt);
  for (int local_rank = 0; local_rank < local_world_size; ++local_rank) {
    fs::create_directory(attempt / std::to_string(local_rank));
  }
}

fs::path LogDir::ErrorAttemptDir(int restart_count) const {
  return error_dir_ / ("attempt_" + std::to_string(restart_count));
}

fs::path LogDir::AttemptDir(int restart_count) const {
  if (!enabled()) return {};
  return run_dir_ / ("attempt_" + std::to_string(restart_count));
}

fs::path LogDir::RankDir(int restart_count, int local_rank) const {
  if (!enabled()) return {};
  return AttemptDir(restart_count) / std::to_string(local_rank);
}

fs::path LogDir::StdoutLog(int restart_count, int local_rank) const {
  if (!enabled()) return {};
  return RankDir(restart_count, local_rank) / "stdout.log";
}

fs::path LogDir::StderrLog(int restart_count, int local_rank) const {
  if (!enabled()) return {};
  return RankDir(restart_count, local_rank) / "stderr.log";
}

fs::path LogDir::ErrorFile(int restart_count, int local_rank) const {
  if (!enabled()) {
    if (error_dir_.empty()) return {};
    return ErrorAttemptDir(restart_count) / std::to_string(local_rank) / "error.json";
  }
  return RankDir(restart_count, local_rank) / "error.json";
}

}  // namespace cpplaunch
