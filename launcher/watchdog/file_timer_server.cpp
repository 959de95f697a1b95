#include "launcher/watchdog/file_timer_server.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

#include "base/fifo.h"
#include "base/random_run_id.h"
#include "launcher/process/posix_sys.h"
#include "launcher/watchdog/timer_request.h"

namespace cpplaunch {
namespace {

// Requests are at most PIPE_BUF bytes (the client refuses longer ones); a line longer than
// this is garbage and is dropped rather than buffered without bound.
constexpr std::size_t kMaxLine = std::size_t{64} * 1024;
constexpr std::size_t kReadChunk = std::size_t{16} * 1024;

double WallNow() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

FileTimerServer::FileTimerServer(boost::asio::io_context& io, std::filesystem::path path, Say say,
                                 OnKill on_kill)
    : io_(io),
      path_(std::move(path)),
      say_(std::move(say)),
      on_kill_(std::move(on_kill)),
      fifo_(io),
      timer_(io),
      buffer_(kReadChunk) {
  OpenFifo fifo = CreateFifo(path_, 0600);
  keep_open_ = std::move(fifo.keep_open);
  fifo_.assign(fifo.read_end.release());
  Read();
}

FileTimerServer::~FileTimerServer() {
  alive_.reset();
  boost::system::error_code ignored;
  fifo_.close(ignored);
  timer_.cancel();
  std::error_code also_ignored;
  std::filesystem::remove(path_, also_ignored);
}

std::filesystem::path FileTimerServer::DefaultPath(const std::filesystem::path& temp_dir) {
  return temp_dir / ("watchdog_timer_" + RandomRunId());
}

void FileTimerServer::NewAttempt() {
  table_.Clear();
  kills_.clear();
  reported_bad_line_ = false;
  timer_.cancel();
}

void FileTimerServer::OnWorkerExit(int local_rank, pid_t pid) {
  table_.DropPid(pid);
  for (WatchdogKill& kill : kills_) {
    if (kill.expiry.pid == pid && !kill.local_rank) kill.local_rank = local_rank;
  }
}

void FileTimerServer::Read() {
  fifo_.async_read_some(
      boost::asio::buffer(buffer_),
      [this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec, std::size_t n) {
        if (alive.expired() || ec == boost::asio::error::operation_aborted) return;
        Consume(n);
        // The agent holds a write end, so EOF cannot happen; any other error ends the reading
        // (the timers already armed still fire).
        if (ec) return say_("watchdog: cannot read " + path_.string() + ": " + ec.message());
        Read();
      });
}

void FileTimerServer::Consume(std::size_t n) {
  partial_.append(buffer_.data(), n);
  std::size_t start = 0;
  for (std::size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
    OnLine(std::string_view(partial_).substr(start, end - start));
  }
  partial_.erase(0, start);
  if (partial_.size() > kMaxLine) partial_.clear();
  Arm();
}

void FileTimerServer::OnLine(std::string_view line) {
  if (line.empty()) return;
  std::string error;
  auto request = ParseTimerRequest(line, &error);
  if (!request) {
    if (!reported_bad_line_)
      say_("watchdog: ignoring a request that is not torch's (" + error + ")");
    reported_bad_line_ = true;
    return;
  }
  if (request->pid == 1 || request->pid == static_cast<int>(::getpid())) return;
  table_.Apply(*request, WallNow());
}

// One steady timer for the earliest expiration. The protocol's times are wall-clock; the
// wait is measured on the steady clock, and Expire compares with the wall clock again.
void FileTimerServer::Arm() {
  auto next = table_.NextExpiration();
  if (!next) {
    timer_.cancel();
    return;
  }
  const double wait = std::max(0.0, *next - WallNow());
  timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(wait, 86400.0))));
  timer_.async_wait([this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec) {
    if (alive.expired() || ec == boost::asio::error::operation_aborted) return;
    Expire();
  });
}

void FileTimerServer::Expire() {
  for (TimerExpiry& expiry : table_.TakeExpired(WallNow())) {
    if (expiry.signal <= 0) continue;  // torch's server leaves such a worker alone too
    WatchdogKill kill{std::move(expiry), std::nullopt, false};
    kill.delivered = posix::KillProcess(kill.expiry.pid, kill.expiry.signal);
    kills_.push_back(kill);
    if (on_kill_) on_kill_(kills_.back());
  }
  Arm();
}

}  // namespace cpplaunch
