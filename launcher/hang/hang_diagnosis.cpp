#include "launcher/hang/hang_diagnosis.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <csignal>
#include <string_view>
#include <utility>

#include "launcher/diagnosis/proc_reader.h"
#include "launcher/hang/hang_report.h"
#include "launcher/hang/hang_setup.h"

namespace cpplaunch {
namespace {

// Whether the worker answered the stack request: faulthandler re-raises the SIGABRT after its
// dump, and a program that leaves the signal alone dies of it too.
bool DiedOfAbort(const FailureRecord& record) {
  return record.exit.signaled() && record.exit.signal() == SIGABRT;
}

}  // namespace

HangDiagnosis::HangDiagnosis(boost::asio::io_context& io,
                             std::optional<std::chrono::milliseconds> timeout,
                             AgentConsole& console, Supervisor& supervisor, WorkerGroup& group,
                             Job& job, std::function<bool()> running)
    : io_(io),
      console_(console),
      supervisor_(supervisor),
      group_(group),
      job_(job),
      running_(std::move(running)),
      stack_timer_(io) {
  if (!timeout) return;
  watch_ = std::make_unique<HangWatch>(
      io_, *timeout, [this] { return group_.live(); }, [this] { OnHang(); });
}

void HangDiagnosis::PrepareWorkers(std::vector<WorkerSpec>& specs, WorkerOutput& output) {
  if (!watch_) return;
  output.Observe([this](int local_rank, bool is_stderr, std::string_view bytes) {
    watch_->OnOutput(local_rank, is_stderr, bytes);
  });
  for (WorkerSpec& spec : specs) PrepareForHangWatch(spec);
}

void HangDiagnosis::AttemptStarted() {
  if (!watch_) return;
  state_ = Watching{};
  watch_->Start();
}

// The watch fired: every worker dumps its stack (SIGABRT with faulthandler on) and dies of it.
void HangDiagnosis::OnHang() {
  if (!running_() || !supervisor_.running()) {
    // No attempt to stop (it is already being torn down): the failures are still the hang's.
    state_ = Hung{HangCause(watch_->timeout())};
    return;
  }
  const std::string notice = HangNotice(watch_->timeout());
  console_.Say(notice);
  job_.OnHang(notice);
  Collect(HangCause(watch_->timeout()));
}

bool HangDiagnosis::OnRemoteStop() {
  // This host saw the hang too and its workers are dumping their stacks: a SIGTERM now would
  // cut the dumps short; Finish stops the workers once they are done.
  if (Collecting()) return true;
  if (!watch_ || watch_->hung() || !watch_->Stalled(watch_->timeout() / 2)) return false;
  watch_->Declare();
  console_.Say(RemoteHangNotice());
  Collect(RemoteHangCause());
  return true;
}

// The state changes before the signal goes out: a worker group may report the deaths (and the
// supervisor ask to hold its teardown) before PassOn returns.
void HangDiagnosis::Collect(std::string cause) {
  state_ = CollectingStacks{std::move(cause)};
  supervisor_.PassOn(SIGABRT);
  stack_timer_.expires_after(kStackGrace);
  stack_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Finish();
  });
}

bool HangDiagnosis::HoldTeardown(std::function<void()> proceed) {
  if (auto* collecting = std::get_if<CollectingStacks>(&state_)) {
    state_ = TeardownHeld{std::move(collecting->cause), std::move(proceed)};
    return true;
  }
  if (auto* held = std::get_if<TeardownHeld>(&state_)) {
    held->proceed = std::move(proceed);
    return true;
  }
  return false;
}

void HangDiagnosis::OnWorkerExit() {
  if (Collecting() && group_.running() == 0) {
    boost::asio::post(io_, [this] { Finish(); });
  }
}

void HangDiagnosis::AttemptDone() {
  if (!watch_) return;
  watch_->Stop();
  Finish();
  if (std::holds_alternative<Watching>(state_)) state_ = Idle{};
}

// Every worker dumped and died, or the grace ran out: the teardown goes on. When no worker died
// of the SIGABRT (each ignores or blocks it), no failure's teardown is waiting: the attempt is
// failed from here (the usual teardown, SIGTERM then SIGKILL), so the hang uses a restart as
// one whose workers dumped their stacks does. A plain stop request would end the attempt as
// "stopped", and a single-host job would end there without its restarts.
void HangDiagnosis::Finish() {
  if (auto* held = std::get_if<TeardownHeld>(&state_)) {
    std::function<void()> proceed = std::move(held->proceed);
    state_ = Hung{std::move(held->cause)};
    stack_timer_.cancel();
    return job_.BeforeFailureTeardown(std::move(proceed));
  }
  auto* collecting = std::get_if<CollectingStacks>(&state_);
  if (collecting == nullptr) return;
  state_ = Hung{std::move(collecting->cause)};
  stack_timer_.cancel();
  if (supervisor_.running()) supervisor_.FailAttempt();
}

bool HangDiagnosis::Collecting() const {
  return std::holds_alternative<CollectingStacks>(state_) ||
         std::holds_alternative<TeardownHeld>(state_);
}

std::string HangDiagnosis::Cause() const {
  if (auto* collecting = std::get_if<CollectingStacks>(&state_)) return collecting->cause;
  if (auto* held = std::get_if<TeardownHeld>(&state_)) return held->cause;
  if (auto* over = std::get_if<Hung>(&state_)) return over->cause;
  return "";
}

bool HangDiagnosis::hung() const { return watch_ && watch_->hung(); }

std::optional<std::string> HangDiagnosis::Reason(const FailureRecord& record, const LogDir& logs,
                                                 int restart_count) const {
  if (!hung()) return std::nullopt;
  return HangReason(Cause(), StderrAfterHang(record, logs, restart_count), DiedOfAbort(record));
}

// What the worker wrote on stderr after the hang: seen through the agent, or (redirected to a
// file with -r) read back from its log.
std::string HangDiagnosis::StderrAfterHang(const FailureRecord& record, const LogDir& logs,
                                           int restart_count) const {
  const auto& seen = watch_->stderr_after_hang();
  if (auto it = seen.find(record.local_rank); it != seen.end()) return it->second;
  constexpr std::size_t kLogLimit = std::size_t{16} << 20;
  return ReadSmallFile(logs.StderrLog(restart_count, record.local_rank), kLogLimit).value_or("");
}

std::string HangDiagnosis::Report(const std::vector<FailureRecord>& records, const LogDir& logs,
                                  int restart_count) const {
  if (!hung() || records.empty()) return "";
  std::vector<RankStderr> ranks;
  ranks.reserve(records.size());
  for (const FailureRecord& record : records) {
    ranks.push_back(RankStderr{record.global_rank, record.local_rank,
                               StderrAfterHang(record, logs, restart_count), DiedOfAbort(record)});
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const RankStderr& a, const RankStderr& b) { return a.global_rank < b.global_rank; });
  return FormatHangReport(ranks);
}

}  // namespace cpplaunch
