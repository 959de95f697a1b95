#pragma once
// torchrun's log directory layout:
//   <base>/<run_id>_XXXXXXXX/attempt_<restart_count>/<local_rank>/{stdout.log,stderr.log,error.json}
// <base> is --log-dir, or a fresh <temp root>/torchelastic_XXXXXXXX when none is given; the
// XXXXXXXX are 8 random characters as Python's mkdtemp makes them. The run directory is made at
// agent start even without redirects, because every worker gets an error.json path. "/dev/null"
// as base disables the log files, as newest torchrun does, but not the error files: newest
// torchrun sets TORCHELASTIC_ERROR_FILE to "" there, so an @record traceback never reaches the
// failure summary (issue 13). cpplaunch gives the workers error files in a private
// <temp root>/cpplaunch_errors_XXXXXXXX, read for the summary and removed at exit.
//
// Blocking filesystem calls. Errors throw std::system_error (std::filesystem::filesystem_error
// is one). Not thread-safe: the agent uses it from its loop thread.

#include <filesystem>
#include <string>
#include <string_view>

namespace cpplaunch {

class LogDir {
 public:
  // The value of --log-dir that disables every file.
  static constexpr std::string_view kDisabled = "/dev/null";

  // Creates <base> if missing (or a fresh temp dir when base is empty) and the unique run
  // directory inside it. Throws std::system_error(ENOTDIR) when base names an existing
  // non-directory, other std::system_error on I/O errors; for a given base, what() is one
  // line naming --log-dir, the path, the reason and what to do.
  static LogDir Create(const std::string& base, std::string_view run_id,
                       const std::filesystem::path& temp_root = TempRoot());

  // Python's tempfile.gettempdir(): the first of $TMPDIR, $TEMP, $TMP that names a directory,
  // else /tmp.
  static std::filesystem::path TempRoot();

  bool enabled() const { return !run_dir_.empty(); }
  // <base>/<run_id>_XXXXXXXX; empty when disabled.
  const std::filesystem::path& run_dir() const { return run_dir_; }

  // Deletes <run_dir>/attempt_<restart_count> if it exists (membership-change restarts reuse
  // the number), then creates it with one subdirectory per local rank. No-op when disabled.
  void PrepareAttempt(int restart_count, int local_world_size) const;

  // Whether any file (a log, an error file) exists under the run directory. Never throws.
  bool HoldsFiles() const;

  // At the agent's exit: a run directory that holds no file is removed, with the
  // torchelastic_XXXXXXXX directory made for it when no --log-dir was given, so that jobs
  // without logs leave nothing behind in the temp directory (a --log-dir given by the user is
  // kept); the private error-file directory of a disabled log directory is removed. Never
  // throws.
  void CleanUpAtExit() const;

  // Paths inside the attempt directory; all empty when disabled, except ErrorFile, which is
  // then in the private error-file directory.
  std::filesystem::path AttemptDir(int restart_count) const;
  std::filesystem::path RankDir(int restart_count, int local_rank) const;
  std::filesystem::path StdoutLog(int restart_count, int local_rank) const;
  std::filesystem::path StderrLog(int restart_count, int local_rank) const;
  std::filesystem::path ErrorFile(int restart_count, int local_rank) const;

 private:
  LogDir(std::filesystem::path run_dir, std::filesystem::path temp_base,
         std::filesystem::path error_dir)
      : run_dir_(std::move(run_dir)),
        temp_base_(std::move(temp_base)),
        error_dir_(std::move(error_dir)) {}
  std::filesystem::path ErrorAttemptDir(int restart_count) const;

  std::filesystem::path run_dir_;
  std::filesystem::path temp_base_;  // the torchelastic_XXXXXXXX made for it, or empty
  std::filesystem::path error_dir_;  // disabled: the private cpplaunch_errors_XXXXXXXX
};

}  // namespace cpplaunch
