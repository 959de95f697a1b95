#include "launcher/agent/agent.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <csignal>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/exit_code.h"
#include "launcher/agent/agent_listeners.h"
#include "launcher/agent/attempt.h"
#include "launcher/agent/find_failures.h"
#include "launcher/agent/launch_check.h"
#include "launcher/agent/multi_host_job.h"
#include "launcher/agent/single_host_job.h"
#include "launcher/diagnosis/proc_reader.h"
#include "launcher/hang/hang_diagnosis.h"
#include "launcher/job/worker_specs.h"
#include "launcher/multihost/host_name.h"
#include "launcher/multihost/hosted_store.h"
#include "launcher/process/job_sentinel.h"
#include "launcher/process/posix_sys.h"
#include "launcher/process/posix_worker_group.h"
#include "launcher/process/signal_watch.h"
#include "launcher/process/supervisor.h"
#include "launcher/process/tapped_worker_group.h"
#include "launcher/report/agent_console.h"
#include "launcher/report/job_exit_status.h"
#include "launcher/report/teardown_report.h"
#include "rendezvous/store/endpoint.h"
#include "worker_env/env_builder.h"

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

// How long the agent waits for worker pipes to reach EOF once the workers are reaped (a
// grandchild that escaped the teardown may hold a write end).
constexpr milliseconds kDrainGrace{2000};
// How long the store's host waits at exit for the other hosts to hang up.
constexpr milliseconds kStoreLinger{3000};
// Bound on flushing the agent's own console at exit.
constexpr milliseconds kFinalFlush{5000};

// Where the agent is in its story. Signals and late callbacks are handled by this alone.
enum class AgentState {
  kStarting,     // options, job, log directory, store: the loop has not run yet
  kRendezvous,   // agreeing on the attempt's world (multi-host: a round through the store)
  kRunning,      // the supervisor runs the attempt's workers
  kConcluding,   // the attempt ended: its output drains, then the job decides
  kExitBarrier,  // this host's workers succeeded; waiting for the other hosts
  kLingering,    // the store's host waits (bounded) for the other hosts to hang up
  kDone,         // flushing the console; the loop stops
};

// This host's workers: how their group is made, the group, the tap that shows the job each exit
// before the supervisor, the supervisor's policy, where each rank's CPUs are, and what to call
// once they are gone for good (the sentinel's Quit).
struct LocalWorkers {
  std::function<std::unique_ptr<WorkerGroup>(boost::asio::io_context&)> make_group;
  std::function<void()> gone;
  std::unique_ptr<WorkerGroup> group = nullptr;
  std::unique_ptr<TappedWorkerGroup> tapped = nullptr;
  std::unique_ptr<Supervisor> supervisor = nullptr;
  NumaPlacement placement = {};
};

// How the run ends.
struct Outcome {
  ExitCode code = ExitCode::kFailure;
  std::optional<int> worker_status;  // --exit-code=worker: the final root cause's own code
  std::optional<std::string> error;  // what ended the agent itself, for its event
};

}  // namespace

class Agent::Impl {
 public:
  Impl(LaunchOptions options, EnvMap environment, AgentParts parts)
      : options_(std::move(options)),
        env_(std::move(environment)),
        console_(io_, parts.stdout_fd, parts.stderr_fd, env_),
        store_(io_),
        workers_{.make_group = std::move(parts.make_worker_group),
                 .gone = std::move(parts.job_over)} {}

  // The whole story; the steps below run in this order, attempt after attempt.
  int Run() {
    const auto started_at = std::chrono::steady_clock::now();
    StoreSecurity security;
    if (auto refusal = CheckLaunch(
            options_, env_, [this](const std::string& line) { console_.Info(line); },
            workers_.placement, security)) {
      return Refuse(refusal->problem, refusal->code);
    }
    try {
      Prepare(security, started_at);  // job, log directory, store, workers, signals, listeners
    } catch (const std::exception& e) {
      return Refuse(e.what(), ExitCode::kFailure);
    }
    // rendezvous -> specs -> spawn -> supervise -> conclude -> (next attempt | end)
    boost::asio::post(io_, [this] { StartAttempt(); });
    io_.run();
    return ExitStatus();
  }

 private:
  // ---- Before the loop.

  void Prepare(const StoreSecurity& security, std::chrono::steady_clock::time_point started_at) {
    job_ = MakeJob(security);
    log_dir_.emplace(LogDir::Create(options_.log_dir.value_or(""), job_->run_id()));
    store_.Host(job_->HostStore());
    // An etcd job has no agent-wide store: each round's store host starts the workers' own.
    const std::string store =
        job_->store_port() != 0
            ? "store on " + Endpoint{job_->store_addr(), job_->store_port()}.ToString()
            : "the workers' store is started by each round's first host";
    console_.Info("run id " + job_->run_id() + "; " + store + "; log directory " +
                  (log_dir_->enabled() ? log_dir_->run_dir().string() : std::string("disabled")));
    const bool logged = !(options_.redirects == StdSpec()) || !(options_.tee == StdSpec());
    if (logged && log_dir_->enabled()) console_.Say("worker logs: " + log_dir_->run_dir().string());
    SuperviseWorkers();
    hang_ = std::make_unique<HangDiagnosis>(io_, options_.hang_timeout, console_,
                                            *workers_.supervisor, *workers_.group, *job_,
                                            [this] { return state_ == AgentState::kRunning; });
    std::vector<int> watched = options_.signals_to_handle;
    watched.insert(watched.end(), options_.forward_signals.begin(), options_.forward_signals.end());
    signals_ = std::make_unique<SignalWatch>(io_, watched, [this](int signo) { OnSignal(signo); });
    if (auto omp = DefaultOmpThreads(env_, options_.nproc_per_node)) console_.Say(*omp);
    listeners_ = MakeAgentListeners(ListenerSetup{.io = io_,
                                                  .options = options_,
                                                  .env = env_,
                                                  .console = console_,
                                                  .logs = *log_dir_,
                                                  .run_id = job_->run_id(),
                                                  .host = host_,
                                                  .started_at = started_at,
                                                  .job = *job_,
                                                  .store = store_.server(),
                                                  .secret = security.secret});
  }

  void SuperviseWorkers() {
    workers_.group = workers_.make_group(io_);
    // The job sees each exit before the supervisor does: a local failure reaches the other
    // hosts at once, not after the local teardown.
    workers_.tapped = std::make_unique<TappedWorkerGroup>(
        *workers_.group, [this](const WorkerExitEvent& event) { OnWorkerExit(event); });
    workers_.supervisor = std::make_unique<Supervisor>(
        *workers_.tapped,
        SupervisorConfig{
            .shutdown_timeout = options_.shutdown_timeout,
            .max_restarts = options_.max_restarts,
            // torchrun's teardown: SIGTERM, then SIGKILL after the shutdown timeout.
            .stop_signal = SIGTERM,
            // While a hang's stacks are dumped, the teardown waits (a SIGTERM could cut a dump).
            .before_failure_teardown =
                [this](std::function<void()> proceed) {
                  if (!hang_->HoldTeardown(proceed)) {
                    job_->BeforeFailureTeardown(std::move(proceed));
                  }
                },
            .on_failure_teardown =
                [this](const WorkerExitEvent& root, std::size_t running) {
                  // Nobody left to stop: the failure lines that follow say it all.
                  if (running == 0) return;
                  console_.Say(FailureTeardownLine(root, attempt_->round().layout.base_rank,
                                                   running, SIGTERM, options_.shutdown_timeout));
                }});
  }

  std::unique_ptr<Job> MakeJob(const StoreSecurity& security) {
    JobHooks hooks{
        .say = [this](const std::string& line) { console_.Say(line); },
        .info = [this](const std::string& line) { console_.Info(line); },
        .debug = console_.DebugSink(),
        .stop_workers = [this](const std::string& line) { return StopWorkers(line); },
        .entered_exit_barrier = [this] { state_ = AgentState::kExitBarrier; },
    };
    if (options_.max_nodes > 1) {
      return std::make_unique<MultiHostJob>(io_, options_, host_->get(), std::move(hooks),
                                            security);
    }
    return std::make_unique<SingleHostJob>(io_, options_, std::move(hooks), security);
  }

  // ---- One attempt.

  void StartAttempt() {
    state_ = AgentState::kRendezvous;
    job_->Rendezvous([this](const Round& round) { Launch(round); },
                     [this](const std::string& line, ExitCode code) {
                       if (!line.empty()) console_.Say(line);
                       if (code != ExitCode::kSuccess) outcome_.error = line;
                       End(code);
                     });
  }

  void Launch(const Round& round) {
    try {
      attempt_ = std::make_unique<Attempt>(io_, round, *log_dir_, console_.out(), console_.err());
      listeners_->OnAttemptStarting(round);
      attempt_->DuplicateFilteredLines(options_, *log_dir_);
      std::string error;
      const AttemptFacts facts{job_->run_id(), round.master_addr, round.master_port,
                               round.restart_count};
      auto specs = BuildWorkerSpecs(options_, env_, round.layout, facts, *log_dir_, &error);
      if (!specs) return Fail(error);
      hang_->PrepareWorkers(*specs, attempt_->output());
      workers_.supervisor->Run(attempt_->Open(std::move(*specs), workers_.placement),
                               round.restart_count,
                               [this](const AttemptResult& result) { OnAttemptDone(result); });
      state_ = AgentState::kRunning;
      const std::vector<LiveWorker> live = workers_.group->live();
      attempt_->Started(live);
      hang_->AttemptStarted();
      listeners_->OnAttemptStarted(
          AttemptStarted{attempt_->round(), live, attempt_->started(), &attempt_->output()});
      attempt_->output().Start();
      console_.Info(attempt_->StartedLine());
    } catch (const std::exception& e) {
      Fail(std::string("cannot start the workers: ") + e.what());
    }
  }

  // Every exit, before the supervisor sees it.
  void OnWorkerExit(const WorkerExitEvent& event) {
    listeners_->OnWorkerExit(event);
    if (attempt_) attempt_->OnWorkerExit(event);
    hang_->OnWorkerExit();
    job_->OnWorkerExit(event);
  }

  void OnAttemptDone(const AttemptResult& result) {
    if (!Ending()) state_ = AgentState::kConcluding;
    const int stop_signal = result.signal != 0 ? result.signal : SIGTERM;
    if (auto line = SigkillLine(result, stop_signal, options_.shutdown_timeout)) {
      console_.Say(*line);
    }
    listeners_->OnAttemptDone(result);
    hang_->AttemptDone();
    for (const WorkerExitEvent& stuck : result.unreaped) {
      const std::optional<ProcStat> stat = ReadProcStat(stuck.pid);
      console_.Say(
          DescribeUnkillable(stuck.id, stuck.pid, stat ? stat->state : '\0', ReadWchan(stuck.pid)));
    }
    // The job decides only once every line the workers wrote is out, so a failure summary or
    // a restart message follows their output rather than cutting into it.
    attempt_->Drain(kDrainGrace, [this, result] {
      job_->Conclude(
          result, [this, result](const AttemptDecision& decision) { CarryOut(result, decision); });
    });
  }

  void CarryOut(const AttemptResult& result, const AttemptDecision& decision) {
    // The agent already ended meanwhile (a signal during the exit barrier): nothing to add.
    if (Ending()) return;
    std::optional<FailureFindings> failures;
    if (decision.report != FailureReportKind::kNone) {
      failures = Diagnose(result, decision.report == FailureReportKind::kFinal);
    }
    listeners_->OnDecision(
        AttemptDecided{attempt_->round(), result, decision, failures ? &*failures : nullptr});
    if (!decision.message.empty()) console_.Say(decision.message);
    attempt_.reset();
    if (decision.next == NextStep::kNextAttempt) return StartAttempt();
    End(decision.exit_code);
  }

  // What failed and why; the final root cause's own code for --exit-code=worker.
  FailureFindings Diagnose(const AttemptResult& result, bool final) {
    FailureFindings findings = FindFailures(result, final, *attempt_, *hang_, *listeners_, options_,
                                            env_, host_->get(), *log_dir_);
    // A hang is the job's failure, not one worker's: its code stays torchrun's.
    if (findings.root_cause && !findings.hung) {
      outcome_.worker_status =
          JobExitStatus(options_.exit_code_mode, ExitCode::kFailure, findings.failures);
    }
    return findings;
  }

  // Another host ended the round.
  bool StopWorkers(const std::string& line) {
    if (state_ != AgentState::kRunning) return false;
    console_.Say(line);
    if (!hang_->OnRemoteStop()) workers_.supervisor->RequestStop();
    return true;
  }

  void OnSignal(int signo) {
    if (IsForwarded(signo)) return PassOn(signo);
    outcome_.error = "received " + SignalName(signo);
    job_->OnSignal(signo);
    switch (state_) {
      case AgentState::kRunning:
        workers_.supervisor->OnSignal(signo);
        // The first signal starts the graceful stop; another one ends the grace.
        if (attempt_->CountSignal() > 1) {
          return console_.Say("received " + SignalName(signo) +
                              " again; SIGKILL to every worker now");
        }
        return console_.Say(SignalTeardownLine(signo, options_.shutdown_timeout));
      case AgentState::kRendezvous:
        return job_->CancelRendezvous();  // its failure ends the run
      case AgentState::kExitBarrier:
        console_.Say("received " + SignalName(signo) + " during the exit barrier; exiting");
        return End(ExitCode::kFailure);
      default:
        // Between attempts or while draining: nothing to forward; the job's decision after
        // this attempt knows of the signal.
        return console_.Say("received " + SignalName(signo) + "; stopping");
    }
  }

  bool IsForwarded(int signo) const {
    const std::vector<int>& forwarded = options_.forward_signals;
    return std::find(forwarded.begin(), forwarded.end(), signo) != forwarded.end();
  }

  // --forward-signals (a preemption notice): the workers get it, the job runs on. Outside an
  // attempt there is no worker to tell; the signal is dropped with a line saying so.
  void PassOn(int signo) {
    if (state_ == AgentState::kRunning && workers_.supervisor->PassOn(signo)) {
      return console_.Say("received " + SignalName(signo) +
                          "; passed it to the workers (--forward-signals); the job keeps running");
    }
    console_.Say("received " + SignalName(signo) + " with no worker running; dropped it");
  }

  // ---- The end.

  // Before the loop runs: print the problem, flush the console, return `code`.
  int Refuse(const std::string& problem, ExitCode code) {
    console_.Say("error: " + problem);
    outcome_.code = code;
    if (log_dir_) log_dir_->CleanUpAtExit();  // Prepare may have made it
    // Prepare may have started the store and the signal watch: their waits never end.
    console_.Flush(std::chrono::steady_clock::now() + kFinalFlush, [this] { io_.stop(); });
    io_.restart();
    io_.run();
    return ProcessExitCode(code);
  }

  // A failure of the agent itself (not of a worker): stop whatever runs and exit 1.
  void Fail(const std::string& message) {
    console_.Say("error: " + message);
    outcome_.error = message;
    job_->OnAgentFailure(message);
    state_ = AgentState::kConcluding;
    if (workers_.group->running() > 0) {
      return workers_.group->StopAll(SIGTERM, options_.shutdown_timeout,
                                     [this](const StopResult&) { End(ExitCode::kFailure); });
    }
    End(ExitCode::kFailure);
  }

  bool Ending() const { return state_ == AgentState::kLingering || state_ == AgentState::kDone; }

  // The first end stands; later ones (late callbacks of an ended job) change nothing.
  void End(ExitCode code) {
    if (Ending()) return;
    if (store_.hosted() && job_->LingersForPeers()) return Linger(code);
    Exit(code);
  }

  // The store's host stays up until the other hosts have hung up, so they can read the round's
  // end or a config error instead of finding the store gone (bounded by kStoreLinger).
  void Linger(ExitCode code) {
    state_ = AgentState::kLingering;
    job_->HangUp();
    store_.Linger(kStoreLinger, [this, code] {
      if (state_ == AgentState::kLingering) Exit(code);
    });
  }

  void Exit(ExitCode code) {
    state_ = AgentState::kDone;
    outcome_.code = code;
    listeners_->OnAgentEnded(AgentEnded{code, ExitStatus(), outcome_.error});
    if (workers_.gone) workers_.gone();
    // A job without logs or error files leaves no empty torchelastic_XXXXXXXX behind.
    if (log_dir_) log_dir_->CleanUpAtExit();
    signals_.reset();
    store_.Stop();
    console_.Flush(std::chrono::steady_clock::now() + kFinalFlush, [this] { io_.stop(); });
  }

  // --exit-code=worker: the root-cause worker's own code instead of torchrun's 1.
  int ExitStatus() const {
    if (outcome_.code == ExitCode::kFailure && outcome_.worker_status) {
      return *outcome_.worker_status;
    }
    return ProcessExitCode(outcome_.code);
  }

  boost::asio::io_context io_;
  LaunchOptions options_;
  EnvMap env_;
  AgentConsole console_;
  AgentState state_ = AgentState::kStarting;
  std::unique_ptr<Job> job_;
  std::optional<LogDir> log_dir_;
  HostedStore store_;  // empty when another host serves the job's store
  LocalWorkers workers_;
  std::unique_ptr<SignalWatch> signals_;
  std::unique_ptr<HangDiagnosis> hang_;  // --hang-timeout (idle without it)
  std::unique_ptr<AgentListeners> listeners_;
  std::unique_ptr<Attempt> attempt_;  // from Launch until the job decided about the attempt
  Outcome outcome_;
  std::shared_ptr<HostName> host_ = std::make_shared<HostName>();
};

Agent::Agent(LaunchOptions options, EnvMap environment, JobSentinel* sentinel)
    : Agent(std::move(options), std::move(environment),
            AgentParts{.make_worker_group =
                           [sentinel](boost::asio::io_context& io) {
                             return MakePosixWorkerGroup(
                                 io, PosixWorkerGroupOptions{.sentinel = sentinel});
                           },
                       .job_over =
                           [sentinel] {
                             if (sentinel != nullptr) sentinel->Quit();
                           }}) {}
Agent::Agent(LaunchOptions options, EnvMap environment, AgentParts parts)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(environment), std::move(parts))) {}
Agent::~Agent() = default;
int Agent::Run() { return impl_->Run(); }

}  // namespace cpplaunch
