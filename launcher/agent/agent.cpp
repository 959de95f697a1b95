#include "launcher/agent/agent.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/exit_code.h"
#include "launcher/agent/attempt_failures.h"
#include "launcher/agent/error_file.h"
#include "launcher/agent/exit_explanation.h"
#include "launcher/agent/failure_report.h"
#include "launcher/agent/hang_report.h"
#include "launcher/agent/hang_setup.h"
#include "launcher/agent/hang_watch.h"
#include "launcher/agent/host_info.h"
#include "launcher/agent/job.h"
#include "launcher/agent/job_exit_status.h"
#include "launcher/agent/libuv_hint.h"
#include "launcher/agent/log_dir.h"
#include "launcher/agent/multi_host_job.h"
#include "launcher/agent/oom_watch.h"
#include "launcher/agent/proc_reader.h"
#include "launcher/agent/process_capacity.h"
#include "launcher/agent/program_check.h"
#include "launcher/agent/single_host_job.h"
#include "launcher/agent/start_store.h"
#include "launcher/agent/store_security.h"
#include "launcher/agent/worker_specs.h"
#include "launcher/cli/script_check.h"
#include "launcher/output/console_writer.h"
#include "launcher/output/worker_output.h"
#include "launcher/process/posix_worker_group.h"
#include "launcher/process/signal_watch.h"
#include "launcher/process/supervisor.h"
#include "launcher/process/tapped_worker_group.h"
#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/store_server.h"
#include "worker_env/env_builder.h"
#include "worker_env/env_names.h"

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
// After a hang, how long the workers get to dump their stacks (SIGABRT) before the teardown.
constexpr milliseconds kStackGrace{2000};

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

}  // namespace

class Agent::Impl {
 public:
  Impl(LaunchOptions options, EnvMap environment, AgentParts parts)
      : options_(std::move(options)),
        env_(std::move(environment)),
        parts_(std::move(parts)),
        out_(io_, parts_.stdout_fd),
        // One writer when stdout and stderr are the same file (a terminal, or 2>&1), so
        // that a stdout line and a stderr line never split each other.
        separate_err_(ConsoleWriter::SameFile(parts_.stdout_fd, parts_.stderr_fd)
                          ? nullptr
                          : std::make_unique<ConsoleWriter>(io_, parts_.stderr_fd)),
        err_(separate_err_ ? *separate_err_ : out_),
        linger_timer_(io_),
        stack_timer_(io_) {}

  // The whole story; the steps below run in this order, attempt after attempt.
  int Run() {
    if (auto problem = UnsupportedOption(options_)) return Refuse(*problem, ExitCode::kUsage);
    if (auto problem = ScriptProblem(options_)) return Refuse(*problem, ExitCode::kUsage);
    std::string error;
    auto security = LoadStoreSecurity(options_.rdzv_conf, env_, &error);
    if (!security) return Refuse(error, ExitCode::kUsage);
    security_ = std::move(*security);
    auto budget = StoreBudgetFromConf(options_.rdzv_conf, &error);
    if (!budget) return Refuse(error, ExitCode::kFailure);
    security_.budget = *budget;
    if (auto problem = ProcessCapacityProblem(options_.nproc_per_node, posix::ReadPidLimits())) {
      return Refuse(*problem, ExitCode::kUsage);
    }
    try {
      Prepare();  // job, log directory, store, worker group, supervisor, signals
    } catch (const std::exception& e) {
      return Refuse(e.what(), ExitCode::kFailure);
    }
    // rendezvous -> specs -> spawn -> supervise -> conclude -> (next attempt | end)
    boost::asio::post(io_, [this] { StartAttempt(); });
    io_.run();
    // --exit-code=worker: the root-cause worker's own code instead of torchrun's 1.
    if (exit_code_ == ExitCode::kFailure && worker_status_) return *worker_status_;
    return ProcessExitCode(exit_code_);
  }

 private:
  // ---- Before the loop.

  void Prepare() {
    job_ = MakeJob();
    log_dir_.emplace(LogDir::Create(options_.log_dir.value_or(""), job_->run_id()));
    store_ = job_->HostStore();
    Info("run id " + job_->run_id() + "; store listening on " +
         Endpoint{job_->store_addr(), job_->store_port()}.ToString() + "; log directory " +
         (log_dir_->enabled() ? log_dir_->run_dir().string() : std::string("disabled")));
    group_ = parts_.make_worker_group(io_);
    // The job sees each exit before the supervisor does: a local failure reaches the other
    // hosts at once, not after the local teardown.
    tapped_group_ = std::make_unique<TappedWorkerGroup>(
        *group_, [this](const WorkerExitEvent& event) { OnWorkerExit(event); });
    supervisor_ = std::make_unique<Supervisor>(
        *tapped_group_,
        SupervisorConfig{.shutdown_timeout = options_.shutdown_timeout,
                         .max_restarts = options_.max_restarts,
                         // torchrun's teardown: SIGTERM, then SIGKILL after
                         // the shutdown timeout.
                         .stop_signal = SIGTERM,
                         .before_failure_teardown = [this](std::function<void()> proceed) {
                           HoldForStacks(std::move(proceed));
                         }});
    if (options_.hang_timeout) {
      hang_ = std::make_unique<HangWatch>(
          io_, *options_.hang_timeout, [this] { return group_->live(); }, [this] { OnHang(); });
    }
    std::vector<int> watched = options_.signals_to_handle;
    watched.insert(watched.end(), options_.forward_signals.begin(), options_.forward_signals.end());
    signals_ = std::make_unique<SignalWatch>(io_, watched, [this](int signo) { OnSignal(signo); });
    if (OmpThreadsDefaulted(env_, options_.nproc_per_node)) {
      // torchrun prints a five-line banner; one line says the same.
      Say("OMP_NUM_THREADS is not set; setting it to 1 for each of the " +
          std::to_string(options_.nproc_per_node) + " workers (set it to tune)");
      // Into the agent's environment too, as torchrun sets os.environ: every attempt's workers
      // inherit it from there.
      env_[std::string(env_names::kOmpNumThreads)] = "1";
    }
  }

  std::unique_ptr<Job> MakeJob() {
    JobHooks hooks{
        .say = [this](const std::string& line) { Say(line); },
        .info = [this](const std::string& line) { Info(line); },
        .stop_workers = [this](const std::string& line) { return StopWorkers(line); },
        .entered_exit_barrier = [this] { state_ = AgentState::kExitBarrier; },
    };
    if (options_.max_nodes > 1) {
      return std::make_unique<MultiHostJob>(io_, options_, Host(), std::move(hooks), security_);
    }
    return std::make_unique<SingleHostJob>(io_, options_, std::move(hooks), security_);
  }

  // ---- One attempt.

  void StartAttempt() {
    state_ = AgentState::kRendezvous;
    job_->Rendezvous([this](const Round& round) { Launch(round); },
                     [this](const std::string& line) {
                       if (!line.empty()) Say(line);
                       End(ExitCode::kFailure);
                     });
  }

  void Launch(const Round& round) {
    round_ = round;
    const RankLayout& layout = round.layout;
    try {
      log_dir_->PrepareAttempt(round.restart_count, layout.local_world_size);
      output_ = std::make_unique<WorkerOutput>(io_, out_, err_);
      if (hang_) {
        output_->Observe([this](int local_rank, bool is_stderr, std::string_view bytes) {
          hang_->OnOutput(local_rank, is_stderr, bytes);
        });
      }
      std::string error;
      const AttemptFacts facts{job_->run_id(), round.master_addr, round.master_port,
                               round.restart_count};
      auto specs = BuildWorkerSpecs(options_, env_, layout, facts, *log_dir_, &error);
      if (!specs) return Fail(error);
      if (hang_) {
        for (WorkerSpec& spec : *specs) PrepareForHangWatch(spec);
      }
      supervisor_->Run(OpenStreams(std::move(*specs)), round.restart_count,
                       [this](const AttemptResult& result) { OnAttemptDone(result); });
      state_ = AgentState::kRunning;
      WatchAttempt();
      output_->Start();
      Info("attempt " + std::to_string(round.restart_count) + ": started " +
           std::to_string(layout.local_world_size) + " workers, ranks " +
           std::to_string(layout.base_rank) + "-" +
           std::to_string(layout.base_rank + layout.local_world_size - 1) + " of " +
           std::to_string(layout.world_size));
    } catch (const std::exception& e) {
      Fail(std::string("cannot start the workers: ") + e.what());
    }
  }

  // The specs as processes: each worker's stdout and stderr opened by this attempt's output.
  std::vector<ProcessSpec> OpenStreams(std::vector<WorkerSpec> specs) {
    std::vector<ProcessSpec> processes;
    processes.reserve(specs.size());
    for (WorkerSpec& spec : specs) {
      ChildStdio stdio = output_->Open(spec.streams);
      processes.push_back(ProcessSpec{.id = spec.local_rank,
                                      .argv = std::move(spec.argv),
                                      .env = std::move(spec.env),
                                      .cwd = std::nullopt,
                                      .stdout_fd = stdio.stdout_fd,
                                      .stderr_fd = stdio.stderr_fd});
    }
    return processes;
  }

  void OnAttemptDone(const AttemptResult& result) {
    if (!Ending()) state_ = AgentState::kConcluding;
    if (hang_) hang_->Stop();
    FinishStacks();
    for (const WorkerExitEvent& stuck : result.unreaped) {
      const std::optional<ProcStat> stat = ReadProcStat(stuck.pid);
      Say(DescribeUnkillable(stuck.id, stuck.pid, stat ? stat->state : '\0', ReadWchan(stuck.pid)));
    }
    // The job decides only once every line the workers wrote is out, so a failure summary or
    // a restart message follows their output rather than cutting into it.
    output_->Drain(kDrainGrace, [this, result] {
      log_write_errors_ = output_->log_write_errors();
      output_.reset();
      job_->Conclude(
          result, [this, result](const AttemptDecision& decision) { CarryOut(result, decision); });
    });
  }

  void CarryOut(const AttemptResult& result, const AttemptDecision& decision) {
    // The agent already ended meanwhile (a signal during the exit barrier): nothing to add.
    if (Ending()) return;
    if (decision.report != FailureReportKind::kNone) {
      ReportFailures(result, decision.report == FailureReportKind::kFinal);
    }
    if (!decision.message.empty()) Say(decision.message);
    if (decision.next == NextStep::kNextAttempt) return StartAttempt();
    End(decision.exit_code);
  }

  // Another host ended the round.
  bool StopWorkers(const std::string& line) {
    if (state_ != AgentState::kRunning) return false;
    Say(line);
    // A hang elsewhere stalls this host too: its workers' stacks are collected as well.
    if (hang_ && !hang_->hung() && hang_->Stalled(*options_.hang_timeout / 2)) {
      hang_->Declare();
      hang_cause_ = RemoteHangCause();
      Say(RemoteHangNotice());
      CollectStacks();
      return true;
    }
    supervisor_->RequestStop();
    return true;
  }

  void OnSignal(int signo) {
    if (IsForwarded(signo)) return PassOn(signo);
    job_->OnSignal(signo);
    switch (state_) {
      case AgentState::kRunning:
        supervisor_->OnSignal(signo);
        return Say("received " + SignalName(signo) +
                   "; forwarding it to the workers; workers still running after " +
                   std::to_string(options_.shutdown_timeout.count()) +
                   " s get SIGKILL (--shutdown-timeout)");
      case AgentState::kRendezvous:
        return job_->CancelRendezvous();  // its failure ends the run
      case AgentState::kExitBarrier:
        Say("received " + SignalName(signo) + " during the exit barrier; exiting");
        return End(ExitCode::kFailure);
      default:
        // Between attempts or while draining: nothing to forward; the job's decision after
        // this attempt knows of the signal.
        return Say("received " + SignalName(signo) + "; stopping");
    }
  }

  bool IsForwarded(int signo) const {
    const std::vector<int>& forwarded = options_.forward_signals;
    return std::find(forwarded.begin(), forwarded.end(), signo) != forwarded.end();
  }

  // --forward-signals (a preemption notice): the workers get it, the job runs on. Outside an
  // attempt there is no worker to tell; the signal is dropped with a line saying so.
  void PassOn(int signo) {
    if (state_ == AgentState::kRunning && supervisor_->PassOn(signo)) {
      return Say("received " + SignalName(signo) +
                 "; passed it to the workers (--forward-signals); the job keeps running");
    }
    Say("received " + SignalName(signo) + " with no worker running; dropped it");
  }

  // ---- Diagnosis: OOM kills and hangs.

  // The attempt's workers just started: the OOM counters' baseline, the hang watch's first
  // sample.
  void WatchAttempt() {
    oom_verdicts_.clear();
    std::vector<pid_t> pids;
    for (const LiveWorker& worker : group_->live()) pids.push_back(worker.pid);
    oom_.Baseline(pids);
    if (hang_) hang_->Start();
  }

  // Every exit, before the supervisor sees it: a SIGKILL is checked against the OOM counters
  // now, while they still tell this death apart from the teardown's.
  void OnWorkerExit(const WorkerExitEvent& event) {
    if (event.exit.signaled() && event.exit.signal() == SIGKILL) {
      oom_verdicts_[event.pid] = oom_.Check();
    }
    if (collecting_stacks_ && group_->running() == 0) {
      boost::asio::post(io_, [this] { FinishStacks(); });
    }
    job_->OnWorkerExit(event);
  }

  // --hang-timeout fired: every worker dumps its stack (SIGABRT with faulthandler on) and dies
  // of it; the teardown of the first failure waits until they are done (HoldForStacks).
  void OnHang() {
    if (state_ != AgentState::kRunning || !supervisor_->running()) return;
    const std::string notice = HangNotice(hang_->timeout());
    Say(notice);
    hang_cause_ = HangCause(hang_->timeout());
    job_->OnHang(notice);
    CollectStacks();
  }

  void CollectStacks() {
    collecting_stacks_ = true;
    supervisor_->PassOn(SIGABRT);
    stack_timer_.expires_after(kStackGrace);
    stack_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) FinishStacks();
    });
  }

  // The supervisor's hold before a failure's teardown: while stacks are being dumped, a
  // SIGTERM from the teardown could cut another worker's dump short.
  void HoldForStacks(std::function<void()> proceed) {
    if (!collecting_stacks_) return job_->BeforeFailureTeardown(std::move(proceed));
    held_teardown_ = [this, proceed = std::move(proceed)]() mutable {
      job_->BeforeFailureTeardown(std::move(proceed));
    };
  }

  // Every worker dumped and died, or the grace ran out: the teardown goes on (or starts, when
  // no worker died of the SIGABRT: not Python, or it handles the signal).
  void FinishStacks() {
    if (!collecting_stacks_) return;
    collecting_stacks_ = false;
    stack_timer_.cancel();
    if (auto held = std::exchange(held_teardown_, {})) return held();
    if (supervisor_->running()) supervisor_->RequestStop();
  }

  // Each failure's plain words: the hang, an OOM kill, a signal from outside, a crash, a
  // program that could not be run.
  void AddReasons(std::vector<FailureRecord>& records, int restart_count) {
    const std::string program = WorkerArgv(options_, env_, 0).front();
    for (FailureRecord& record : records) {
      if (hang_ && hang_->hung()) {
        record.reason = HangReason(hang_cause_, StderrAfterHang(record, restart_count));
        continue;
      }
      ExitFacts facts;
      facts.exit = record.exit;
      facts.sent_by_cpplaunch = record.killed_by_teardown;
      facts.program = program;
      if (auto it = oom_verdicts_.find(record.pid); it != oom_verdicts_.end()) {
        facts.oom_counter_read = it->second.counter_read;
        facts.oom = it->second.oom;
      }
      if (!record.exit.signaled() && (record.exit.code() == 126 || record.exit.code() == 127)) {
        facts.program_check = CheckProgram(program, Lookup(env_, "PATH"));
      }
      record.reason = ExplainExit(facts);
    }
  }

  // What the worker wrote on stderr after the hang: seen through the agent, or (redirected to
  // a file with -r) read back from its log.
  std::string StderrAfterHang(const FailureRecord& record, int restart_count) {
    const auto& seen = hang_->stderr_after_hang();
    if (auto it = seen.find(record.local_rank); it != seen.end()) return it->second;
    constexpr std::size_t kLogLimit = std::size_t{16} << 20;
    return ReadSmallFile(log_dir_->StderrLog(restart_count, record.local_rank), kLogLimit)
        .value_or("");
  }

  std::string HangReportText(const std::vector<FailureRecord>& records, int restart_count) {
    std::vector<RankStderr> ranks;
    for (const FailureRecord& record : records) {
      ranks.push_back(RankStderr{record.global_rank, record.local_rank,
                                 StderrAfterHang(record, restart_count)});
    }
    std::sort(ranks.begin(), ranks.end(), [](const RankStderr& a, const RankStderr& b) {
      return a.global_rank < b.global_rank;
    });
    return FormatHangReport(ranks);
  }

  // ---- Reporting.

  // The failure summary on stderr, the "failed (exitcode: ...)" lines users grep for, and
  // the agent's own error file when its parent asked for one.
  void ReportFailures(const AttemptResult& result, bool final) {
    const std::string binary = WorkerArgv(options_, env_, 0).front();
    std::vector<FailureRecord> records =
        AttemptFailureRecords(result, round_.layout.base_rank, Host(), *log_dir_);
    AddReasons(records, result.restart_count);
    const bool hung = hang_ && hang_->hung();
    const std::string hang_report =
        hung && !records.empty() ? HangReportText(records, result.restart_count) : "";
    for (const FailureRecord& record : records) {
      if (!record.killed_by_teardown) Say(FailedLogLine(record, binary));
    }
    if (records.empty() || !final) return err_.Write(hang_report);
    const bool logged = !(options_.redirects == StdSpec()) || !(options_.tee == StdSpec());
    if (logged && log_dir_->enabled()) {
      Say("the workers' stdout.log and stderr.log are in " +
          log_dir_->AttemptDir(result.restart_count).string());
    }
    auto failures = LoadWorkerFailures(std::move(records));
    // A hang is the job's failure, not one worker's: its code stays torchrun's.
    if (!hung)
      worker_status_ = JobExitStatus(options_.exit_code_mode, ExitCode::kFailure, failures);
    const std::string entrypoint = EntrypointName(WorkerCommandSpec(options_));
    std::string summary = FormatFailureSummary(entrypoint, failures);
    // A log cut short is part of what went wrong: the user would look there next.
    for (const LogWriteError& cut : log_write_errors_) {
      summary += "cpplaunch: log file cut short: " + cut.path.string() + " (" + cut.error + ")\n";
    }
    err_.Write(summary);
    err_.Write(hang_report);
    SayLibuvHint(failures, result.restart_count);
    if (auto path = Lookup(env_, env_names::kErrorFile); path && !path->empty()) {
      try {
        WriteErrorFile(*path,
                       AgentErrorDocument(failures[RootCauseIndex(failures)], entrypoint, summary));
      } catch (const std::exception& e) {
        Say("cannot write the error file " + *path + ": " + e.what());
      }
    }
  }

  // Workers that failed by themselves (not stopped by the teardown), all with PyTorch's
  // "built without libuv" error: one line on the way out.
  void SayLibuvHint(const std::vector<WorkerFailure>& failures, int restart_count) {
    std::vector<std::string> texts;
    for (const WorkerFailure& failure : failures) {
      if (failure.record.killed_by_teardown) continue;
      texts.push_back(
          FailureText(failure, log_dir_->StderrLog(restart_count, failure.record.local_rank)));
    }
    if (auto hint = LibuvHint(texts, options_.worker_store)) Say(*hint);
  }

  // One line on the agent's stderr, in order with the workers' tee'd lines.
  void Say(const std::string& line) { err_.Write("cpplaunch: " + line + "\n"); }

  // torchrun's agent logs its configuration at INFO when LOGLEVEL asks for it.
  void Info(const std::string& line) {
    auto level = Lookup(env_, "LOGLEVEL");
    if (level && (*level == "INFO" || *level == "DEBUG")) Say(line);
  }

  const std::string& Host() {
    if (host_.empty()) host_ = FullyQualifiedHostName();
    return host_;
  }

  // ---- The end.

  // Before the loop runs: print the problem, flush the console, return `code`.
  int Refuse(const std::string& problem, ExitCode code) {
    Say("error: " + problem);
    exit_code_ = code;
    auto deadline = std::chrono::steady_clock::now() + kFinalFlush;
    out_.Flush(deadline, [] {});
    err_.Flush(deadline, [] {});
    io_.restart();
    io_.run();
    return ProcessExitCode(code);
  }

  // A failure of the agent itself (not of a worker): stop whatever runs and exit 1.
  void Fail(const std::string& message) {
    Say("error: " + message);
    job_->OnAgentFailure(message);
    state_ = AgentState::kConcluding;
    if (group_->running() > 0) {
      group_->StopAll(SIGTERM, options_.shutdown_timeout,
                      [this](const StopResult&) { End(ExitCode::kFailure); });
      return;
    }
    End(ExitCode::kFailure);
  }

  bool Ending() const { return state_ == AgentState::kLingering || state_ == AgentState::kDone; }

  // The first end stands; later ones (late callbacks of an ended job) change nothing.
  void End(ExitCode code) {
    if (Ending()) return;
    if (store_ && job_->LingersForPeers()) return Linger(code);
    Exit(code);
  }

  // The store's host stays up until the other hosts have hung up (the store's last connection
  // closes), so they can read the round's end or a config error instead of finding the store
  // gone; kStoreLinger bounds the wait for a host that never hangs up.
  void Linger(ExitCode code) {
    state_ = AgentState::kLingering;
    job_->HangUp();
    auto finish = [this, code] {
      if (state_ == AgentState::kLingering) Exit(code);
    };
    linger_timer_.expires_after(kStoreLinger);
    linger_timer_.async_wait([finish](const boost::system::error_code&) { finish(); });
    store_->WhenIdle(finish);
  }

  void Exit(ExitCode code) {
    state_ = AgentState::kDone;
    exit_code_ = code;
    linger_timer_.cancel();
    signals_.reset();
    if (store_) store_->Stop();
    auto deadline = std::chrono::steady_clock::now() + kFinalFlush;
    out_.Flush(deadline, [] {});
    err_.Flush(deadline, [this] { io_.stop(); });
  }

  boost::asio::io_context io_;
  LaunchOptions options_;
  EnvMap env_;
  StoreSecurity security_;  // the store's secret and allowed peers (never in env_)
  AgentParts parts_;
  ConsoleWriter out_;
  std::unique_ptr<ConsoleWriter> separate_err_;
  ConsoleWriter& err_;
  boost::asio::steady_timer linger_timer_;
  boost::asio::steady_timer stack_timer_;  // the workers' time to dump their stacks

  AgentState state_ = AgentState::kStarting;
  std::unique_ptr<Job> job_;
  std::optional<LogDir> log_dir_;
  std::unique_ptr<StoreServer> store_;  // null when another host serves the job's store
  std::unique_ptr<WorkerGroup> group_;
  std::unique_ptr<TappedWorkerGroup> tapped_group_;
  std::unique_ptr<Supervisor> supervisor_;
  std::unique_ptr<SignalWatch> signals_;
  std::unique_ptr<WorkerOutput> output_;         // this attempt's
  Round round_;                                  // this attempt's
  std::vector<LogWriteError> log_write_errors_;  // this attempt's
  ExitCode exit_code_ = ExitCode::kFailure;
  std::optional<int> worker_status_;  // --exit-code=worker: the final root cause's own code
  std::string host_;
  OomWatch oom_;
  std::map<pid_t, OomVerdict> oom_verdicts_;  // this attempt's SIGKILL deaths, by pid
  std::unique_ptr<HangWatch> hang_;           // --hang-timeout; null when off
  std::string hang_cause_;                    // why the workers were stopped for their stacks
  bool collecting_stacks_ = false;            // SIGABRT sent after a hang; dumps under way
  std::function<void()> held_teardown_;       // the failure teardown waiting for the dumps
};

Agent::Agent(LaunchOptions options, EnvMap environment, JobSentinel* sentinel)
    : Agent(std::move(options), std::move(environment),
            AgentParts{.make_worker_group = [sentinel](boost::asio::io_context& io) {
              return MakePosixWorkerGroup(io, PosixWorkerGroupOptions{.sentinel = sentinel});
            }}) {}
Agent::Agent(LaunchOptions options, EnvMap environment, AgentParts parts)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(environment), std::move(parts))) {}
Agent::~Agent() = default;
int Agent::Run() { return impl_->Run(); }

}  // namespace cpplaunch
