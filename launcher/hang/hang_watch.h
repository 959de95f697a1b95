#pragma once
// --hang-timeout: notices that the job stopped making progress (progress_rule.h) and keeps what
// each worker writes on stderr afterwards, where the faulthandler dumps go (python_stack.h).
//
// One timer per attempt, at a coarse interval (a fifth of the timeout, between 100 ms and
// 30 s); each tick reads the CPU time of every live worker's process tree from /proc
// (proc_reader.h). Output is counted as it passes through the agent (WorkerOutput's observer).
// The agent decides what a hang does; this only says when.
// Threads: the agent's loop thread, for every method and callback.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/hang/progress_rule.h"
#include "launcher/process/worker_group.h"

namespace cpplaunch {

class HangWatch {
 public:
  // Stderr kept per rank after a hang: enough for a deep stack of every thread.
  static constexpr std::size_t kMaxKeptBytes = std::size_t{256} << 10;

  using LiveWorkers = std::function<std::vector<LiveWorker>()>;
  // `io` and whatever `live` reads must outlive the watch. `on_hang` runs once per attempt.
  HangWatch(boost::asio::io_context& io, std::chrono::milliseconds timeout, LiveWorkers live,
            std::function<void()> on_hang);

  // An attempt's workers started: forget the previous attempt, take the first sample, tick.
  void Start();
  // The attempt ended: no more ticks. What was kept stays readable until the next Start().
  void Stop();

  // Bytes a worker wrote (WorkerOutput's observer): lines are progress; after a hang, stderr
  // is kept.
  void OnOutput(int local_rank, bool is_stderr, std::string_view bytes);

  // Declares the hang now (another host's watch fired while this host's workers are stalled
  // too): no more ticks, stderr is kept from here on. No effect when already hung.
  void Declare();
  // Whether no progress was seen for at least `at_least` (to the tick's resolution) and no
  // output line since the last tick.
  bool Stalled(std::chrono::milliseconds at_least) const;

  bool hung() const { return hung_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Each rank's stderr since the hang was declared.
  const std::map<int, std::string>& stderr_after_hang() const { return kept_; }

  // The tick interval for a timeout.
  static std::chrono::milliseconds Interval(std::chrono::milliseconds timeout);

 private:
  using Clock = std::chrono::steady_clock;
  ProgressSample Sample() const;
  void Arm();
  void Tick();

  boost::asio::io_context& io_;
  std::chrono::milliseconds timeout_;
  LiveWorkers live_;
  std::function<void()> on_hang_;
  boost::asio::steady_timer timer_;
  std::uint64_t lines_ = 0;
  ProgressSample last_sample_;
  Clock::time_point last_sample_time_;
  Clock::time_point last_progress_;
  bool running_ = false;
  bool hung_ = false;
  std::map<int, std::string> kept_;
};

}  // namespace cpplaunch
