#include "launcher/process/supervisor.h"

#include <csignal>
#include <stdexcept>
#include <utility>

namespace cpplaunch {

const char* OutcomeName(AttemptOutcome outcome) {
  switch (outcome) {
    case AttemptOutcome::kSucceeded:
      return "succeeded";
    case AttemptOutcome::kFailed:
      return "failed";
    case AttemptOutcome::kRestart:
      return "restart";
    case AttemptOutcome::kSignaled:
      return "signaled";
    case AttemptOutcome::kStopped:
      return "stopped";
  }
  return "unknown";
}

Supervisor::Supervisor(WorkerGroup& group, SupervisorConfig config)
    : group_(group), config_(std::move(config)) {
  group_.SetExitCallback([this](const WorkerExitEvent& event) { OnExit(event); });
}

void Supervisor::Run(std::vector<ProcessSpec> specs, int restart_count, DoneCallback done) {
  if (running()) throw std::logic_error("Supervisor::Run while an attempt is running");
  result_ = AttemptResult{};
  result_.restart_count = restart_count;
  cause_ = Cause::kNone;
  sent_signals_.clear();
  stopping_ = false;
  holding_ = false;
  failed_ = false;
  ++attempt_;
  done_ = std::move(done);
  try {
    group_.Start(std::move(specs));
  } catch (...) {
    // Start spawns one worker at a time: those before the failing one are running. They are
    // killed at once and the attempt never reports (the caller gets the exception instead).
    done_ = nullptr;
    group_.StopAll(SIGKILL, std::chrono::milliseconds(0), [](const StopResult&) {});
    throw;
  }
  if (group_.running() == 0) Sweep();  // nothing was started
}

bool Supervisor::OnSignal(int signo) {
  if (!running()) return false;
  // The first signal names the attempt's end; a second one (Ctrl-C again) means "now".
  if (result_.signal != 0) {
    result_.killed_on_second_signal = true;
    sent_signals_.insert(SIGKILL);
    group_.Signal(SIGKILL);
    return true;
  }
  result_.signal = signo;
  BeginTeardown(Cause::kSignal, signo);
  return true;
}

bool Supervisor::PassOn(int signo) {
  if (!running()) return false;
  group_.Signal(signo);
  return true;
}

void Supervisor::RequestStop() {
  if (running()) BeginTeardown(Cause::kRequest, config_.stop_signal);
}

void Supervisor::FailAttempt() {
  if (!running()) return;
  failed_ = true;
  BeginTeardown(Cause::kRequest, config_.stop_signal);
}

void Supervisor::OnExit(const WorkerExitEvent& event) {
  if (!running()) return;
  ExitRole role = Classify(event.exit);
  result_.exits.push_back(ExitRecord{event, role});
  if (role == ExitRole::kFailed) {
    // Strictly earlier only: on equal times the first observed failure stays the root.
    std::optional<std::size_t>& root = result_.root_failure;
    if (!root || event.time < result_.exits[*root].event.time) root = result_.exits.size() - 1;
    // A failure during a teardown already under way changes nothing about the teardown.
    if (cause_ == Cause::kNone && !holding_) return HoldThenTearDown();
  }
  if (group_.running() == 0 && !holding_) Sweep();
}

void Supervisor::HoldThenTearDown() {
  if (!config_.before_failure_teardown) return BeginTeardown(Cause::kFailure, config_.stop_signal);
  holding_ = true;
  config_.before_failure_teardown([this, attempt = attempt_] {
    if (!holding_ || attempt != attempt_ || !running()) return;
    holding_ = false;
    // Unless a signal or a stop request began it meanwhile.
    if (cause_ == Cause::kNone) return BeginTeardown(Cause::kFailure, config_.stop_signal);
    if (group_.running() == 0) Sweep();
  });
}

ExitRole Supervisor::Classify(const WorkerExit& exit) const {
  if (exit.ok()) return ExitRole::kSucceeded;
  if (cause_ == Cause::kNone) return ExitRole::kFailed;
  // After the teardown began, only a death by a signal we sent makes a worker a victim.
  if (exit.signaled() && sent_signals_.count(exit.signal()) != 0) return ExitRole::kStopped;
  return ExitRole::kFailed;
}

void Supervisor::BeginTeardown(Cause cause, int signo) {
  holding_ = false;
  if (cause_ == Cause::kNone) cause_ = cause;
  sent_signals_.insert(signo);
  sent_signals_.insert(SIGKILL);  // the group escalates to SIGKILL on its own after the grace
  if (stopping_) {
    group_.Signal(signo);  // a second signal is forwarded again
    return;
  }
  stopping_ = true;
  if (cause == Cause::kFailure && config_.on_failure_teardown && result_.root_failure) {
    config_.on_failure_teardown(result_.exits[*result_.root_failure].event, group_.running());
  }
  group_.StopAll(signo, config_.shutdown_timeout,
                 [this](const StopResult& stop) { OnStopped(stop); });
}

// Every worker exited on its own: still stop the group, which sweeps leftover descendants.
void Supervisor::Sweep() {
  if (stopping_) return;
  stopping_ = true;
  group_.StopAll(config_.stop_signal, config_.shutdown_timeout,
                 [this](const StopResult& stop) { OnStopped(stop); });
}

void Supervisor::OnStopped(const StopResult& stop) {
  result_.unreaped = stop.unreaped;
  Finish();
}

AttemptOutcome Supervisor::Outcome() const {
  if (result_.signal != 0) return AttemptOutcome::kSignaled;
  if (result_.root_failure || failed_) {
    return result_.restart_count < config_.max_restarts ? AttemptOutcome::kRestart
                                                        : AttemptOutcome::kFailed;
  }
  if (cause_ == Cause::kRequest) return AttemptOutcome::kStopped;
  return AttemptOutcome::kSucceeded;
}

void Supervisor::Finish() {
  result_.outcome = Outcome();
  // Moved out first: `done` may call Run(), which resets result_ and done_.
  AttemptResult result = std::move(result_);
  DoneCallback done = std::move(done_);
  done_ = nullptr;
  done(result);  // may call Run() for the next attempt
}

}  // namespace cpplaunch
