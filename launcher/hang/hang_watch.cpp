#include "launcher/hang/hang_watch.h"

#include <algorithm>

#include "launcher/diagnosis/proc_reader.h"

namespace cpplaunch {
namespace {

// USER_HZ: /proc reports CPU time in ticks of 1/100 s on every Linux architecture.
constexpr long kTicksPerSecond = 100;

}  // namespace

HangWatch::HangWatch(boost::asio::io_context& io, std::chrono::milliseconds timeout,
                     LiveWorkers live, std::function<void()> on_hang)
    : io_(io),
      timeout_(timeout),
      live_(std::move(live)),
      on_hang_(std::move(on_hang)),
      timer_(io) {}

std::chrono::milliseconds HangWatch::Interval(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 5, std::chrono::milliseconds(100), std::chrono::milliseconds(30000));
}

void HangWatch::Start() {
  kept_.clear();
  hung_ = false;
  running_ = true;
  last_sample_ = Sample();
  last_sample_time_ = last_progress_ = Clock::now();
  Arm();
}

void HangWatch::Stop() {
  running_ = false;
  timer_.cancel();
}

void HangWatch::OnOutput(int local_rank, bool is_stderr, std::string_view bytes) {
  lines_ += static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
  if (!hung_ || !is_stderr) return;
  std::string& kept = kept_[local_rank];
  kept.append(bytes.substr(0, kMaxKeptBytes - std::min(kMaxKeptBytes, kept.size())));
}

void HangWatch::Declare() {
  hung_ = true;
  Stop();
}

bool HangWatch::Stalled(std::chrono::milliseconds at_least) const {
  return running_ && lines_ == last_sample_.output_lines &&
         Clock::now() - last_progress_ >= at_least;
}

ProgressSample HangWatch::Sample() const {
  ProgressSample sample;
  sample.output_lines = lines_;
  for (const LiveWorker& worker : live_()) {
    if (auto ticks = TreeCpuTicks(worker.pid)) sample.cpu_ticks[worker.id] = *ticks;
  }
  return sample;
}

void HangWatch::Arm() {
  timer_.expires_after(Interval(timeout_));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && running_) Tick();
  });
}

void HangWatch::Tick() {
  const Clock::time_point now = Clock::now();
  ProgressSample sample = Sample();
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - last_sample_time_);
  if (Progressed(last_sample_, sample, elapsed, kTicksPerSecond)) last_progress_ = now;
  last_sample_ = std::move(sample);
  last_sample_time_ = now;
  if (now - last_progress_ < timeout_) return Arm();
  hung_ = true;
  running_ = false;
  on_hang_();
}

}  // namespace cpplaunch
