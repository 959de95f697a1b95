#pragma once
// --hang-timeout as the agent runs it: the watch (hang_watch.h) says when the job stopped making
// progress; this decides what follows, in explicit states:
//
//   Idle ──AttemptStarted──▶ Watching ──the watch fires / another host's hang──▶ CollectingStacks
//   CollectingStacks ──the supervisor's failure teardown asks to go on──▶ TeardownHeld
//   CollectingStacks | TeardownHeld ──every worker died, or kStackGrace ran out──▶ Hung
//     (out of CollectingStacks at the grace's end, no worker died of the SIGABRT: they ignore or
//     block it; the supervisor fails the attempt, stopping them, so that it uses a restart)
//   Hung ──AttemptStarted──▶ Watching
//
// Collecting stacks: every worker got SIGABRT (faulthandler dumps its stack on stderr and it
// dies); a SIGTERM now would cut another worker's dump short, so the failure teardown the first
// such death starts is held back: TeardownHeld carries the supervisor's `proceed` and hands it
// to the job once the dumps are in. Hung: the attempt's failures are the hang's; its cause and
// what each rank wrote since feed the failure report, until the next attempt starts.
//
// Without --hang-timeout the diagnosis stays Idle and every call is a no-op.
// Threads: construct, call and destroy on the agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "launcher/hang/hang_watch.h"
#include "launcher/job/job.h"
#include "launcher/job/worker_specs.h"
#include "launcher/output/log_dir.h"
#include "launcher/output/worker_output.h"
#include "launcher/process/supervisor.h"
#include "launcher/process/worker_group.h"
#include "launcher/report/agent_console.h"
#include "launcher/report/failure_report.h"

namespace cpplaunch {

class HangDiagnosis {
 public:
  // After a hang, how long the workers get to dump their stacks (SIGABRT) before the teardown.
  static constexpr std::chrono::milliseconds kStackGrace{2000};

  struct Idle {};
  struct Watching {};
  struct CollectingStacks {
    std::string cause;  // why the workers were stopped for their stacks (hang_report.h)
  };
  struct TeardownHeld {
    std::string cause;
    std::function<void()> proceed;  // the supervisor's failure teardown, waiting for the dumps
  };
  struct Hung {
    std::string cause;
  };
  using State = std::variant<Idle, Watching, CollectingStacks, TeardownHeld, Hung>;

  // `timeout`: --hang-timeout (nullopt: off). The diagnosis says its lines on `console`, stops
  // the attempt's workers through `supervisor` (`group` runs them) and tells `job` of a hang
  // (the round ends for every host) while `running` (the agent runs an attempt). Everything
  // given must outlive the diagnosis.
  HangDiagnosis(boost::asio::io_context& io, std::optional<std::chrono::milliseconds> timeout,
                AgentConsole& console, Supervisor& supervisor, WorkerGroup& group, Job& job,
                std::function<bool()> running);

  // Before the attempt's workers are spawned: their specs route the streams through the agent
  // and turn the faulthandler on (hang_setup.h); `output` shows the watch what they write.
  void PrepareWorkers(std::vector<WorkerSpec>& specs, WorkerOutput& output);
  // The attempt's workers run: the watch takes its first sample. Forgets the previous attempt.
  void AttemptStarted();
  // Another host ended the round while this host's workers run. Returns true when the stop is
  // the diagnosis' to make: stacks are being collected here, or this host's workers are
  // stalled too (a hang elsewhere stalls this host as well: their stacks are collected, and
  // the teardown follows); false: the caller stops the workers.
  bool OnRemoteStop();
  // The supervisor is about to tear the workers down after a failure. Returns true when the
  // teardown is held back (stacks are being collected; `proceed` goes to the job's
  // BeforeFailureTeardown once they are in); false: the caller goes on at once.
  bool HoldTeardown(std::function<void()> proceed);
  // Every exit: once no worker is left while collecting stacks, the teardown goes on.
  void OnWorkerExit();
  // The attempt ended: the watch stops; a collection still under way ends now.
  void AttemptDone();

  // Whether the attempt's workers were stopped because the job hung.
  bool hung() const;
  // A failed worker's reason after a hang (why it was stopped, where its stack was); nullopt
  // when the job did not hang. `logs` and `restart_count` find the worker's stderr.log when its
  // stderr did not pass through the agent.
  std::optional<std::string> Reason(const FailureRecord& record, const LogDir& logs,
                                    int restart_count) const;
  // The block after the failure summary: where each rank of `records` was stuck ("" when the
  // job did not hang or there are no records).
  std::string Report(const std::vector<FailureRecord>& records, const LogDir& logs,
                     int restart_count) const;

  const State& state() const { return state_; }

 private:
  void OnHang();
  void Collect(std::string cause);
  void Finish();
  bool Collecting() const;
  std::string Cause() const;  // why the workers were stopped ("" before any hang)
  std::string StderrAfterHang(const FailureRecord& record, const LogDir& logs,
                              int restart_count) const;

  boost::asio::io_context& io_;
  AgentConsole& console_;
  Supervisor& supervisor_;
  WorkerGroup& group_;
  Job& job_;
  std::function<bool()> running_;
  std::unique_ptr<HangWatch> watch_;  // null without --hang-timeout
  boost::asio::steady_timer stack_timer_;
  State state_ = Idle{};
};

}  // namespace cpplaunch
