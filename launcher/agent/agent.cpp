#include "launcher/agent/agent.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/executable_search.h"
#include "base/exit_code.h"
#include "launcher/agent/multi_host_job.h"
#include "launcher/agent/single_host_job.h"
#include "launcher/diagnosis/exit_explanation.h"
#include "launcher/diagnosis/interpreter_hint.h"
#include "launcher/diagnosis/libuv_hint.h"
#include "launcher/diagnosis/oom_watch.h"
#include "launcher/diagnosis/proc_reader.h"
#include "launcher/diagnosis/program_check.h"
#include "launcher/diagnosis/script_check.h"
#include "launcher/diagnosis/stderr_tail.h"
#include "launcher/hang/hang_report.h"
#include "launcher/hang/hang_setup.h"
#include "launcher/hang/hang_watch.h"
#include "launcher/job/job.h"
#include "launcher/job/worker_specs.h"
#include "launcher/multihost/host_info.h"
#include "launcher/multihost/start_store.h"
#include "launcher/multihost/store_security.h"
#include "launcher/output/console_writer.h"
#include "launcher/output/log_dir.h"
#include "launcher/output/worker_output.h"
#include "launcher/placement/numa_topology.h"
#include "launcher/placement/process_capacity.h"
#include "launcher/process/job_sentinel.h"
#include "launcher/process/posix_sys.h"
#include "launcher/process/posix_worker_group.h"
#include "launcher/process/signal_watch.h"
#include "launcher/process/supervisor.h"
#include "launcher/process/tapped_worker_group.h"
#include "launcher/report/attempt_failures.h"
#include "launcher/report/elastic_event.h"
#include "launcher/report/error_file.h"
#include "launcher/report/failure_report.h"
#include "launcher/report/job_exit_status.h"
#include "launcher/report/teardown_report.h"
#include "launcher/watchdog/file_timer_server.h"
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
// Lines of the root cause's stderr.log shown when it wrote no error file.
constexpr std::size_t kStderrTailLines = 10;
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
    started_at_ = std::chrono::steady_clock::now();
    if (auto problem = UnsupportedOption(options_)) return Refuse(*problem, ExitCode::kUsage);
    // Before any worker starts and before any restart is spent: every attempt would fail alike.
    const auto path = Lookup(env_, "PATH");
    if (auto problem = ScriptProblem(options_, path ? path->c_str() : nullptr)) {
      return Refuse(*problem, ExitCode::kUsage);
    }
    if (auto problem = BindToNuma()) return Refuse(*problem, ExitCode::kUsage);
    std::string error;
    auto security = LoadStoreSecurity(options_.rdzv.store, &error);
    if (!security) return Refuse(error, ExitCode::kUsage);
    security_ = std::move(*security);
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

  // --numa-binding: each local rank's CPUs, from the topology read once here, so that a worker's
  // child only calls sched_setaffinity. The error line when the host cannot satisfy it.
  std::optional<std::string> BindToNuma() {
    if (!options_.numa_binding) return std::nullopt;
    const std::optional<NumaPolicy> policy = ParseNumaPolicy(*options_.numa_binding);
    if (!policy) return "--numa-binding: invalid choice '" + *options_.numa_binding + "'";
    const std::vector<int> affinity = posix::CurrentCpuAffinity();
    const std::set<int> allowed(affinity.begin(), affinity.end());
    try {
      const NumaTopology topology =
          ReadNumaTopology("/sys", allowed, Lookup(env_, "CUDA_VISIBLE_DEVICES"));
      numa_cpus_ = NumaBindings(topology, allowed, options_.nproc_per_node, *policy);
    } catch (const NumaBindingError& e) {
      return std::string(e.what());
    }
    for (std::size_t rank = 0; rank < numa_cpus_.size(); ++rank) {
      Info("local rank " + std::to_string(rank) + " bound to CPUs " +
           FormatCpuList(numa_cpus_[rank]) + " (--numa-binding=" + *options_.numa_binding + ")");
    }
    return std::nullopt;
  }

  void Prepare() {
    job_ = MakeJob();
    log_dir_.emplace(LogDir::Create(options_.log_dir.value_or(""), job_->run_id()));
    store_ = job_->HostStore();
    // An etcd job has no agent-wide store: each round's store host starts the workers' own.
    const std::string store =
        job_->store_port() != 0
            ? "store listening on " + Endpoint{job_->store_addr(), job_->store_port()}.ToString()
            : "the workers' store is started by each round's first host";
    Info("run id " + job_->run_id() + "; " + store + "; log directory " +
         (log_dir_->enabled() ? log_dir_->run_dir().string() : std::string("disabled")));
    const bool logged = !(options_.redirects == StdSpec()) || !(options_.tee == StdSpec());
    if (logged && log_dir_->enabled()) Say("worker logs: " + log_dir_->run_dir().string());
    group_ = parts_.make_worker_group(io_);
    // The job sees each exit before the supervisor does: a local failure reaches the other
    // hosts at once, not after the local teardown.
    tapped_group_ = std::make_unique<TappedWorkerGroup>(
        *group_, [this](const WorkerExitEvent& event) { OnWorkerExit(event); });
    supervisor_ = std::make_unique<Supervisor>(
        *tapped_group_,
        SupervisorConfig{
            .shutdown_timeout = options_.shutdown_timeout,
            .max_restarts = options_.max_restarts,
            // torchrun's teardown: SIGTERM, then SIGKILL after
            // the shutdown timeout.
            .stop_signal = SIGTERM,
            .before_failure_teardown =
                [this](std::function<void()> proceed) { HoldForStacks(std::move(proceed)); },
            .on_failure_teardown =
                [this](const WorkerExitEvent& root, std::size_t running) {
                  // Nobody left to stop: the failure lines that follow say it all.
                  if (running == 0) return;
                  Say(FailureTeardownLine(root, round_.layout.base_rank, running, SIGTERM,
                                          options_.shutdown_timeout));
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
    StartWatchdog();
  }

  // torchrun's file-timer watchdog, when TORCHELASTIC_ENABLE_FILE_TIMER=1: the FIFO's path
  // goes into the agent's environment, so every attempt's workers inherit it.
  void StartWatchdog() {
    if (Lookup(env_, env_names::kEnableFileTimer).value_or("") != "1") return;
    auto path = Lookup(env_, env_names::kTimerFile);
    watchdog_ = std::make_unique<FileTimerServer>(
        io_, path ? std::filesystem::path(*path) : FileTimerServer::DefaultPath(LogDir::TempRoot()),
        [this](const std::string& line) { Say(line); },
        [this](const WatchdogKill& kill) {
          RecordEvent([&] { return WatchdogEvent(EventFacts(), "timer expired", &kill.expiry); });
          if (kill.delivered)
            RecordEvent(
                [&] { return WatchdogEvent(EventFacts(), "kill worker process", &kill.expiry); });
          Say("watchdog: pid " + std::to_string(kill.expiry.pid) + " ran past its timer '" +
              kill.expiry.scope_id + "'; " +
              (kill.delivered ? "sent it " + SignalName(kill.expiry.signal)
                              : "already gone, " + SignalName(kill.expiry.signal) + " not sent"));
        });
    env_[std::string(env_names::kTimerFile)] = watchdog_->path().string();
    Info("watchdog listening on " + watchdog_->path().string());
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
                       agent_error_ = line;
                       End(ExitCode::kFailure);
                     });
  }

  void Launch(const Round& round) {
    round_ = round;
    const RankLayout& layout = round.layout;
    try {
      log_dir_->PrepareAttempt(round.restart_count, layout.local_world_size);
      output_ = std::make_unique<WorkerOutput>(io_, out_, err_);
      if (watchdog_) {
        watchdog_->NewAttempt();
        RecordEvent([&] { return WatchdogEvent(EventFacts(), "watchdog started", nullptr); });
      }
      DuplicateFilteredLines(round.restart_count);
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
      signals_this_attempt_ = 0;
      attempt_started_ = std::chrono::system_clock::now();
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

  // --duplicate-stdout-filters / --duplicate-stderr-filters: torchrun's filtered_stdout.log and
  // filtered_stderr.log in the attempt's directory (none when files are disabled).
  void DuplicateFilteredLines(int restart_count) {
    if (!log_dir_->enabled()) return;
    const std::filesystem::path dir = log_dir_->AttemptDir(restart_count);
    output_->DuplicateMatchingLines(false, options_.duplicate_stdout_filters,
                                    dir / "filtered_stdout.log");
    output_->DuplicateMatchingLines(true, options_.duplicate_stderr_filters,
                                    dir / "filtered_stderr.log");
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
                                      .stderr_fd = stdio.stderr_fd,
                                      .cpus = NumaCpus(spec.local_rank)});
    }
    return processes;
  }

  // --numa-binding's CPUs for a local rank; empty (the agent's affinity) without the option.
  std::vector<int> NumaCpus(int local_rank) const {
    const auto rank = static_cast<std::size_t>(local_rank);
    if (rank >= numa_cpus_.size()) return {};
    return {numa_cpus_[rank].begin(), numa_cpus_[rank].end()};
  }

  void OnAttemptDone(const AttemptResult& result) {
    if (!Ending()) state_ = AgentState::kConcluding;
    const int stop_signal = result.signal != 0 ? result.signal : SIGTERM;
    if (auto line = SigkillLine(result, stop_signal, options_.shutdown_timeout)) Say(*line);
    if (watchdog_)
      RecordEvent([&] { return WatchdogEvent(EventFacts(), "watchdog stopped", nullptr); });
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
    // This host saw the hang too and its workers are dumping their stacks: a SIGTERM now would
    // cut the dumps short; FinishStacks stops the workers once they are done.
    if (collecting_stacks_) return true;
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
    agent_error_ = "received " + SignalName(signo);
    job_->OnSignal(signo);
    switch (state_) {
      case AgentState::kRunning:
        supervisor_->OnSignal(signo);
        // The first signal starts the graceful stop; another one ends the grace.
        if (++signals_this_attempt_ > 1) {
          return Say("received " + SignalName(signo) + " again; SIGKILL to every worker now");
        }
        return Say(SignalTeardownLine(signo, options_.shutdown_timeout));
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
    if (watchdog_) watchdog_->OnWorkerExit(event.id, event.pid);
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
    const Interpreter interpreter = WorkerInterpreter();
    // The file that ran, as torchrun's sys.executable: "python3" alone does not say which.
    const std::string binary =
        interpreter.resolved.empty() ? interpreter.program : interpreter.resolved;
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
    if (log_dir_->HoldsFiles()) {
      Say("the workers' log and error files are in " +
          log_dir_->AttemptDir(result.restart_count).string());
    }
    const std::vector<FailureRecord> all_records = records;
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
    if (watchdog_) summary += FormatWatchdogKills(watchdog_->kills(), round_.layout.base_rank);
    err_.Write(summary);
    const WorkerFailure& root = failures[RootCauseIndex(failures)];
    if (!root.error) {
      const auto log = log_dir_->StderrLog(result.restart_count, root.record.local_rank);
      if (auto note = StderrTailNote(root.record.global_rank, log, kStderrTailLines)) {
        err_.Write(*note);
      }
    }
    err_.Write(hang_report);
    SayLibuvHint(failures, result.restart_count);
    SayInterpreterHint(all_records, failures, result.restart_count, interpreter);
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

  // Every worker failed at once, alike: perhaps the wrong python (a venv's, pyenv's).
  void SayInterpreterHint(const std::vector<FailureRecord>& records,
                          const std::vector<WorkerFailure>& failures, int restart_count,
                          const Interpreter& interpreter) {
    if (options_.no_python) return;
    std::vector<std::string> texts;
    for (const WorkerFailure& failure : failures) {
      texts.push_back(
          FailureText(failure, log_dir_->StderrLog(restart_count, failure.record.local_rank)));
    }
    const auto workers = static_cast<std::size_t>(round_.layout.local_world_size);
    if (auto hint = InterpreterHint(records, workers, attempt_started_, texts, interpreter)) {
      Say(*hint);
    }
  }

  // What the workers' argv[0] is and where execvp finds it on their PATH.
  Interpreter WorkerInterpreter() const {
    Interpreter interpreter;
    interpreter.program = WorkerArgv(options_, env_, 0).front();
    const auto exec = Lookup(env_, env_names::kPythonExec);
    interpreter.from_python_exec = !options_.no_python && exec && !exec->empty();
    const auto path = Lookup(env_, "PATH");
    interpreter.resolved =
        FindExecutable(interpreter.program, path ? path->c_str() : nullptr).found.value_or("");
    return interpreter;
  }

  // --event-log-handler=console: torchrun's StreamHandler prints each event's JSON on stderr.
  // null and dynamic_rendezvous (a NullHandler in torch too) print nothing.
  // The event is built only when printed: its facts include the host's resolved name, a
  // resolver call (possibly DNS) every job would otherwise pay for at its end.
  template <class MakeEvent>
  void RecordEvent(MakeEvent make_event) {
    if (options_.event_log_handler == "console") err_.Write(make_event() + "\n");
  }

  EventContext EventFacts() {
    const std::string program = WorkerArgv(options_, env_, 0).front();
    return EventContext{
        .run_id = job_->run_id(),
        .group_rank = round_.layout.group_rank,
        .group_world_size = round_.layout.group_world_size,
        .entry_point = program.substr(program.rfind('/') + 1),
        .role = options_.role,
        .hostname = Host(),
        .total_run_time = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::steady_clock::now() - started_at_)
                              .count(),
        .rdzv_backend = options_.standalone ? "c10d" : options_.rdzv_backend,
        .agent_restarts = round_.restart_count,
    };
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
    if (log_dir_) log_dir_->CleanUpAtExit();  // Prepare may have made it
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
    agent_error_ = message;
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
    // As newest torchrun's launcher records it: SUCCEEDED when the agent's run came to its
    // end (whatever the workers did), FAILED when a signal or an error of its own ended it.
    RecordEvent([&] {
      return AgentStatusEvent(EventFacts(), agent_error_ ? "FAILED" : "SUCCEEDED", agent_error_);
    });
    exit_code_ = code;
    if (parts_.job_over) parts_.job_over();
    // A job without logs or error files leaves no empty torchelastic_XXXXXXXX behind.
    if (log_dir_) log_dir_->CleanUpAtExit();
    linger_timer_.cancel();
    signals_.reset();
    watchdog_.reset();
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
  std::vector<std::set<int>> numa_cpus_;  // --numa-binding's CPUs by local rank; empty = none
  std::unique_ptr<StoreServer> store_;    // null when another host serves the job's store
  std::unique_ptr<WorkerGroup> group_;
  std::unique_ptr<TappedWorkerGroup> tapped_group_;
  std::unique_ptr<Supervisor> supervisor_;
  std::unique_ptr<SignalWatch> signals_;
  std::unique_ptr<WorkerOutput> output_;                   // this attempt's
  std::unique_ptr<FileTimerServer> watchdog_;              // TORCHELASTIC_ENABLE_FILE_TIMER=1 only
  Round round_;                                            // this attempt's
  int signals_this_attempt_ = 0;                           // agent signals while this attempt ran
  std::chrono::system_clock::time_point attempt_started_;  // this attempt's
  std::vector<LogWriteError> log_write_errors_;            // this attempt's
  ExitCode exit_code_ = ExitCode::kFailure;
  std::optional<int> worker_status_;  // --exit-code=worker: the final root cause's own code
  std::string host_;
  std::chrono::steady_clock::time_point started_at_;
  std::optional<std::string> agent_error_;  // what ended the agent itself, for its event
  OomWatch oom_;
  std::map<pid_t, OomVerdict> oom_verdicts_;  // this attempt's SIGKILL deaths, by pid
  std::unique_ptr<HangWatch> hang_;           // --hang-timeout; null when off
  std::string hang_cause_;                    // why the workers were stopped for their stacks
  bool collecting_stacks_ = false;            // SIGABRT sent after a hang; dumps under way
  std::function<void()> held_teardown_;       // the failure teardown waiting for the dumps
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
