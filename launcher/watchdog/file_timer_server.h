#pragma once
// torchrun's worker watchdog (TORCHELASTIC_ENABLE_FILE_TIMER=1): the server side of torch's
// FileTimerClient. Workers write acquire/release lines (timer_request.h) to a FIFO; a timer
// that runs out gets its pid killed with the timer's signal (timer_table.h).
//
// Event-driven on the agent's io_context: the FIFO is an Asio descriptor read as lines arrive,
// and one steady timer is armed for the earliest expiration; nothing polls. Differences from
// torch's server: the FIFO is created with mode 0600 (only the agent's user can ask for a
// kill), a request naming the agent itself or pid 1 is ignored, and the agent does not kill
// itself after reaping a worker (newest torchrun does): the worker's death is a failure like
// any other, with restarts and the summary.
//
// Threads: construct, call and destroy on the io_context's thread; callbacks run there.
// Errors: the constructor throws std::system_error when the FIFO cannot be made; a malformed
// line is reported once per attempt through `say` and skipped.

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "launcher/watchdog/timer_table.h"
#include "launcher/watchdog/watchdog_kill.h"

namespace cpplaunch {

class FileTimerServer {
 public:
  using Say = std::function<void(const std::string&)>;
  // Told of every kill as it happens (after the signal was sent).
  using OnKill = std::function<void(const WatchdogKill&)>;

  // Makes the FIFO at `path` (replacing what is there) and starts reading it.
  FileTimerServer(boost::asio::io_context& io, std::filesystem::path path, Say say,
                  OnKill on_kill = {});
  // Stops reading, cancels the timer and removes the FIFO.
  ~FileTimerServer();
  FileTimerServer(const FileTimerServer&) = delete;
  FileTimerServer& operator=(const FileTimerServer&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // A new attempt: the old workers' timers and kills are forgotten.
  void NewAttempt();
  // A worker (local rank `local_rank`) exited: its timers go; a kill of its pid gets its rank.
  void OnWorkerExit(int local_rank, pid_t pid);
  // This attempt's kills, in the order they happened.
  const std::vector<WatchdogKill>& kills() const { return kills_; }

  // Where the FIFO goes without TORCHELASTIC_TIMER_FILE: <temp dir>/watchdog_timer_<uuid4>.
  static std::filesystem::path DefaultPath(const std::filesystem::path& temp_dir);

 private:
  void Read();
  void Consume(std::size_t n);
  void OnLine(std::string_view line);
  void Arm();
  void Expire();

  boost::asio::io_context& io_;
  std::filesystem::path path_;
  Say say_;
  OnKill on_kill_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  UniqueFd keep_open_;
  boost::asio::posix::stream_descriptor fifo_;
  boost::asio::steady_timer timer_;
  std::string partial_;
  std::vector<char> buffer_;
  TimerTable table_;
  std::vector<WatchdogKill> kills_;
  bool reported_bad_line_ = false;
};

}  // namespace cpplaunch
