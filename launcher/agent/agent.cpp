#include "launcher/agent/agent.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "launcher/agent/error_file.h"
#include "launcher/agent/failure_report.h"
#include "launcher/agent/host_info.h"
#include "launcher/agent/log_dir.h"
#include "launcher/agent/multi_host_plan.h"
#include "launcher/agent/multi_host_session.h"
#include "launcher/cli/script_check.h"
#include "launcher/output/console_writer.h"
#include "launcher/output/line_prefixer.h"
#include "launcher/output/worker_output.h"
#include "launcher/process/posix_worker_group.h"
#include "launcher/process/signal_watch.h"
#include "launcher/process/supervisor.h"
#include "launcher/process/tapped_worker_group.h"
#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/store_server.h"
#include "worker_env/env_builder.h"
#include "worker_env/env_names.h"
#include "worker_env/rank_layout.h"
#include "worker_env/worker_command.h"

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

// --run-path: torchrun runs the script with runpy inside its own Python, with @record
// applied. Without an interpreter in the agent, the same is done in the worker's Python.
constexpr const char* kRunPathBootstrap =
    "import runpy, sys\n"
    "try:\n"
    "    from torch.distributed.elastic.multiprocessing.errors import record\n"
    "except ImportError:\n"
    "    record = lambda f: f\n"
    "sys.argv = sys.argv[1:]\n"
    "record(lambda: runpy.run_path(sys.argv[0], run_name='__main__'))()\n";

}  // namespace

std::optional<std::string> UnsupportedOption(const LaunchOptions& o) {
  if (o.logs_specs && *o.logs_specs != "default")
    return "--logs-specs=" + *o.logs_specs +
           " names a Python plugin; cpplaunch has torchrun's default log layout only "
           "(remove the option)";
  if (o.numa_binding)
    return "--numa-binding is not supported: cpplaunch does not bind workers to NUMA nodes "
           "(remove the option, or wrap the worker in numactl)";
  if (o.event_log_handler != "null")
    return "--event-log-handler=" + o.event_log_handler +
           " is not supported: cpplaunch emits no torchelastic events (use the default, null)";
  if (!o.duplicate_stdout_filters.empty() || !o.duplicate_stderr_filters.empty())
    return "--duplicate-stdout-filters/--duplicate-stderr-filters are not supported yet "
           "(remove them; grep the per-rank logs written with --redirects/--tee instead)";
  if (o.rdzv_backend == "etcd" || o.rdzv_backend == "etcd-v2")
    return "--rdzv-backend=" + o.rdzv_backend +
           " is not supported: cpplaunch agents rendezvous through their own store "
           "(use --rdzv-backend=c10d or static)";
  return std::nullopt;
}

class Agent::Impl {
 public:
  Impl(LaunchOptions options, EnvMap environment, JobSentinel* sentinel)
      : options_(std::move(options)),
        env_(std::move(environment)),
        sentinel_(sentinel),
        out_(io_, STDOUT_FILENO),
        // One writer when stdout and stderr are the same file (a terminal, or 2>&1), so
        // that a stdout line and a stderr line never split each other.
        separate_err_(ConsoleWriter::SameFile(STDOUT_FILENO, STDERR_FILENO)
                          ? nullptr
                          : std::make_unique<ConsoleWriter>(io_, STDERR_FILENO)),
        err_(separate_err_ ? *separate_err_ : out_) {}

  int Run() {
    if (auto problem = UnsupportedOption(options_)) {
      Say("error: " + *problem);
      return Finish(2);
    }
    if (auto problem = ScriptProblem(options_)) {
      Say("error: " + *problem);
      return Finish(2);
    }
    try {
      Prepare();
    } catch (const StoreBindError& e) {
      Say("error: " + std::string(e.what()));
      return Finish(1);
    } catch (const std::exception& e) {
      Say("error: " + std::string(e.what()));
      return Finish(1);
    }
    boost::asio::post(io_, [this] { StartAttempt(); });
    io_.run();
    return exit_code_;
  }

 private:
  // One line on the agent's stderr, in order with the workers' tee'd lines.
  void Say(const std::string& line) { err_.Write("cpplaunch: " + line + "\n"); }

  // torchrun's agent logs its configuration at INFO when LOGLEVEL asks for it.
  void Info(const std::string& line) {
    auto level = Lookup(env_, "LOGLEVEL");
    if (level && (*level == "INFO" || *level == "DEBUG")) Say(line);
  }

  // Flushes the agent's console writers (they may hold queued output) and returns `code`.
  int Finish(int code) {
    exit_code_ = code;
    auto deadline = std::chrono::steady_clock::now() + kFinalFlush;
    out_.Flush(deadline, [] {});
    err_.Flush(deadline, [] {});
    io_.restart();
    io_.run();
    return code;
  }

  void Prepare() {
    ResolveJobShape();
    if (options_.max_nodes > 1) PlanMultiHostJob();
    log_dir_.emplace(LogDir::Create(options_.log_dir.value_or(""), run_id_));
    if (!multi_) {
      HostStore();
    } else {
      HostMultiHostStore();
    }
    Info("run id " + run_id_ + "; store listening on " +
         Endpoint{master_addr_, master_port_}.ToString() + "; log directory " +
         (log_dir_->enabled() ? log_dir_->run_dir().string() : std::string("disabled")));
    group_ = MakePosixWorkerGroup(io_, PosixWorkerGroupOptions{.sentinel = sentinel_});
    WorkerGroup* supervised = group_.get();
    if (multi_) {
      // Sees each exit before the supervisor does: a local failure reaches the other hosts
      // at once, not after the local teardown.
      tapped_group_ = std::make_unique<TappedWorkerGroup>(
          *group_, [this](const WorkerExitEvent& event) { OnWorkerExit(event); });
      supervised = tapped_group_.get();
    }
    supervisor_ = std::make_unique<Supervisor>(
        *supervised, SupervisorConfig{.shutdown_timeout = options_.shutdown_timeout,
                                      .max_restarts = options_.max_restarts,
                                      .stop_signal = SIGTERM});
    signals_ = std::make_unique<SignalWatch>(io_, options_.signals_to_handle,
                                             [this](int signo) { OnSignal(signo); });
    if (OmpThreadsDefaulted(env_, options_.nproc_per_node)) {
      // torchrun prints a five-line banner; one line says the same.
      Say("OMP_NUM_THREADS is not set; setting it to 1 for each of the " +
          std::to_string(options_.nproc_per_node) + " workers (set it to tune)");
      env_[std::string(env_names::kOmpNumThreads)] = "1";
    }
  }

  // Single host: the store endpoint and run id. --standalone and a one-host c10d rendezvous
  // behave as newest torchrun: a fresh run id (standalone) and a free port unless one is given.
  void ResolveJobShape() {
    run_id_ = options_.rdzv_id;
    master_addr_ = options_.master_addr;
    master_port_ = options_.master_port;
    port_was_chosen_ = options_.IsSet("--master-port");
    bool dynamic = options_.standalone || options_.rdzv_backend == "c10d";
    if (options_.standalone) {
      run_id_ = RandomRunId();
      master_addr_ = "127.0.0.1";
      master_port_ = 0;
      port_was_chosen_ = true;
    } else if (dynamic || !options_.rdzv_endpoint.empty()) {
      std::string error;
      auto endpoint = ParseEndpoint(
          options_.rdzv_endpoint.empty() ? "localhost:29400" : options_.rdzv_endpoint, &error);
      if (!endpoint) throw std::runtime_error("--rdzv-endpoint: " + error);
      master_addr_ = endpoint->host;
      master_port_ = endpoint->port >= 0 ? endpoint->port : (dynamic ? 29400 : master_port_);
      port_was_chosen_ = true;
    }
  }

  static std::string RandomRunId() {
    // A uuid4 as Python prints it; the run id only has to be unique, not secret.
    std::FILE* f = std::fopen("/proc/sys/kernel/random/uuid", "r");
    char buf[64] = {};
    if (f != nullptr) {
      if (std::fgets(buf, sizeof(buf), f) == nullptr) buf[0] = '\0';
      std::fclose(f);
    }
    std::string id(buf);
    while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
    return id.empty() ? "standalone-" + std::to_string(getpid()) : id;
  }

  // The agent hosts the store the workers use as their TCPStore (TORCHELASTIC_USE_AGENT_STORE).
  // It listens on the --master-addr address only. torchrun's default port 29500 is a
  // frequent collision between jobs on one host: when the user did not choose it, a busy
  // 29500 falls back to a free port instead of failing.
  void HostStore() {
    StoreServerOptions store_options;
    store_options.bind_host = master_addr_;
    store_options.port = static_cast<uint16_t>(master_port_);
    try {
      store_ = std::make_unique<StoreServer>(io_, store_options);
    } catch (const StoreBindError& e) {
      if (port_was_chosen_ || master_port_ == 0 || !e.address_in_use()) throw;
      store_options.port = 0;
      store_ = std::make_unique<StoreServer>(io_, store_options);
      Say("port " + std::to_string(master_port_) + " is busy; the store listens on port " +
          std::to_string(store_->port()) + " instead (use --master-port to choose)");
    }
    master_port_ = store_->port();
  }

  // ---- Multi-host (--nnodes MAX > 1): see launcher/agent/multi_host_session.h.

  void PlanMultiHostJob() {
    std::string error;
    auto plan =
        PlanMultiHost(options_, Host(), static_cast<int>(::getpid()), IsLocalAddress, &error);
    if (!plan) throw std::runtime_error(error);
    run_id_ = plan->run_id;
    master_addr_ = plan->store_host;
    master_port_ = plan->store_port;
    port_was_chosen_ = true;
    multi_ = std::make_unique<MultiHostSession>(io_, std::move(*plan),
                                                [this](const std::string& line) { Say(line); });
  }

  // Static: node rank 0 hosts the store on --master-addr:--master-port. c10d: the agent told so
  // by is_host, or whose host has the endpoint's address; when several agents share a host
  // (tests on loopback), the first to bind hosts and the others join it as clients.
  void HostMultiHostStore() {
    const MultiHostPlan& plan = multi_->plan();
    if (plan.host_store) {
      try {
        HostStore();
      } catch (const StoreBindError& e) {
        if (plan.host_forced || !plan.dynamic) throw;
        Info(std::string(e.what()) + "; joining that store as a client");
      }
    }
    multi_->set_hosts_store(store_ != nullptr);
    if (store_) {
      Info("this host serves the job's store on " +
           Endpoint{master_addr_, master_port_}.ToString());
    }
  }

  void MultiHostRendezvous(const std::function<void(const RankLayout&)>& ready) {
    rendezvous_pending_ = true;
    multi_->JoinRound(
        next_round_,
        [this, ready](const RendezvousResult& round) {
          rendezvous_pending_ = false;
          if (interrupted_by_ != 0) return End(1);
          restart_count_ = round.restart_count;
          master_addr_ = round.master_addr;
          master_port_ = round.master_port;
          std::string error;
          auto layout = ComputeRankLayout(round.group_rank, round.local_world_sizes(), &error);
          if (!layout) return Fail("rank layout: " + error);
          Info("rendezvous round " + std::to_string(round.round) + " complete: node rank " +
               std::to_string(round.group_rank) + " of " +
               std::to_string(round.group_world_size()) + ", world size " +
               std::to_string(layout->world_size) + ", restart count " +
               std::to_string(restart_count_));
          stop_requested_ = false;
          multi_->OpenChannel([this](const RoundEnd& end) { OnRoundEnd(end); });
          ready(*layout);
        },
        [this](const std::string& message) {
          rendezvous_pending_ = false;
          if (interrupted_by_ != 0) {
            Say("rendezvous interrupted by " + SignalName(interrupted_by_) + "; exiting");
          } else {
            Say("error: " + message);
          }
          End(1);
        });
  }

  // Every worker exit, before the supervisor sees it. The first failure not caused by a
  // teardown is this host's news for the others.
  void OnWorkerExit(const WorkerExitEvent& event) {
    if (event.exit.ok() || stop_requested_ || interrupted_by_ != 0 || multi_->round_end()) return;
    RoundEnd notice = multi_->Notice(RoundEndKind::kWorkerFailure);
    notice.rank = layout_.base_rank + event.id;
    notice.local_rank = event.id;
    notice.detail = event.exit.describe();
    multi_->PublishEnd(notice);
  }

  bool IsMine(const RoundEnd& end) const {
    RoundEnd mine = multi_->Notice(end.kind);
    return (end.kind == RoundEndKind::kWorkerFailure || end.kind == RoundEndKind::kAgentStopped) &&
           end.node_rank == mine.node_rank && end.host == mine.host && end.addr == mine.addr;
  }

  // The round ended somewhere (or this host lost the store): stop the local workers now.
  void OnRoundEnd(const RoundEnd& end) {
    if (!supervisor_->running() || IsMine(end)) return;
    if (end.kind == RoundEndKind::kMembershipChange) {
      Say(end.Describe() + "; stopping the workers for a new rendezvous round");
    } else {
      Say("stopping the workers: " + end.Describe());
    }
    stop_requested_ = true;
    supervisor_->RequestStop();
  }

  void ConcludeMultiHost(const AttemptResult& result) {
    if (interrupted_by_ != 0 || result.outcome == AttemptOutcome::kSignaled) {
      Say("workers stopped after " +
          SignalName(interrupted_by_ != 0 ? interrupted_by_ : result.signal) +
          "; exiting with code 1");
      return End(1);
    }
    if (result.outcome == AttemptOutcome::kSucceeded && !multi_->round_end()) {
      finishing_ = true;
      return multi_->FinishJob([this, result](FinishOutcome outcome) {
        finishing_ = false;
        if (outcome == FinishOutcome::kPassed) return End(0);
        if (outcome == FinishOutcome::kTimedOut) {
          Say("exit barrier: not every host finished within " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                 multi_->plan().exit_barrier_timeout)
                                 .count()) +
              " s; this host's workers succeeded, exiting");
          return End(0);
        }
        if (!multi_->round_end()) {
          Say("error: lost the other hosts during the exit barrier");
          return End(1);
        }
        DecideAfterRound(result, *multi_->round_end());
      });
    }
    if (result.root_failure && !multi_->round_end()) {
      OnWorkerExit(result.exits[*result.root_failure].event);  // in case the tap missed it
    }
    multi_->WhenEndKnown([this, result](const RoundEnd& end) { DecideAfterRound(result, end); });
  }

  // Every host decides the same way from the same round end: a new round (membership change,
  // or a failure with restarts left: one job-wide count), or the end of the job.
  void DecideAfterRound(const AttemptResult& result, const RoundEnd& end) {
    multi_->CloseChannel();
    const int64_t round = multi_->round().round;
    if (end.kind == RoundEndKind::kMembershipChange) {
      Say("new rendezvous round after a membership change (the restart count stays " +
          std::to_string(restart_count_) + ")");
      next_round_ = RoundTransition{round, restart_count_, false};
      return StartAttempt();
    }
    const bool restart = end.kind != RoundEndKind::kStoreLost &&
                         end.kind != RoundEndKind::kConfigError &&
                         restart_count_ < options_.max_restarts;
    const bool local_failure =
        result.outcome == AttemptOutcome::kFailed || result.outcome == AttemptOutcome::kRestart;
    if (local_failure) ReportFailures(result, /*final=*/!restart);
    if (restart) {
      Say("job attempt " + std::to_string(restart_count_) +
          " failed (root cause: " + end.Describe() + "); restarting on every host (restart " +
          std::to_string(restart_count_ + 1) + " of " + std::to_string(options_.max_restarts) +
          ")");
      next_round_ = RoundTransition{round, restart_count_, true};
      return StartAttempt();
    }
    Say("job failed; root cause: " + end.Describe());
    multi_->CloseRendezvous("the job failed: " + end.Describe());
    End(1);
  }

  // One attempt: agree on the world with the other hosts, then start the local workers.
  void StartAttempt() {
    Rendezvous([this](const RankLayout& layout) { LaunchWorkers(layout); });
  }

  // Single host: this agent is the whole world. (The multi-host rendezvous replaces this
  // with a round through the store; it calls `ready` on the loop thread.)
  void Rendezvous(const std::function<void(const RankLayout&)>& ready) {
    if (multi_) return MultiHostRendezvous(ready);
    std::string error;
    auto layout = ComputeRankLayout(0, 1, options_.nproc_per_node, &error);
    if (!layout) return Fail("rank layout: " + error);
    ready(*layout);
  }

  void LaunchWorkers(const RankLayout& layout) {
    layout_ = layout;
    std::string error;
    try {
      log_dir_->PrepareAttempt(restart_count_, layout_.local_world_size);
      output_ = std::make_unique<WorkerOutput>(io_, out_, err_);
      auto specs = BuildSpecs(&error);
      if (!error.empty()) return Fail(error);
      supervisor_->Run(std::move(specs), restart_count_,
                       [this](const AttemptResult& result) { OnAttemptDone(result); });
      output_->Start();
      Info("attempt " + std::to_string(restart_count_) + ": started " +
           std::to_string(layout_.local_world_size) + " workers, ranks " +
           std::to_string(layout_.base_rank) + "-" +
           std::to_string(layout_.base_rank + layout_.local_world_size - 1) + " of " +
           std::to_string(layout_.world_size));
    } catch (const std::exception& e) {
      Fail(std::string("cannot start the workers: ") + e.what());
    }
  }

  CommandSpec Command() const {
    CommandSpec spec{options_.training_script, options_.training_script_args, options_.module,
                     options_.no_python};
    if (options_.run_path) {
      spec.module = false;
      spec.no_python = false;
      spec.training_script_args.insert(spec.training_script_args.begin(), options_.training_script);
      spec.training_script = "-c";
    }
    return spec;
  }

  std::vector<std::string> Argv(const CommandSpec& spec, int local_rank) const {
    auto argv = BuildWorkerCommand(env_, spec, local_rank).argv;
    // [python, -u, -c, script, args...] -> [python, -u, -c, bootstrap, script, args...]
    if (options_.run_path) argv.insert(argv.begin() + 3, kRunPathBootstrap);
    return argv;
  }

  std::vector<ProcessSpec> BuildSpecs(std::string* error) {
    JobInfo job;
    job.role = options_.role;
    job.master_addr = master_addr_;
    job.master_port = master_port_;
    job.restart_count = restart_count_;
    job.max_restarts = options_.max_restarts;
    job.run_id = run_id_;
    job.use_agent_store = true;
    job.signals_to_handle = options_.signals_to_handle_text;
    job.virtual_local_rank = options_.virtual_local_rank;
    job.error_file_for = [this](int lr) {
      return log_dir_->ErrorFile(restart_count_, lr).string();
    };

    const auto prefix_template = Lookup(env_, "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE");
    const CommandSpec command = Command();
    std::vector<ProcessSpec> specs;
    for (const WorkerIdentity& who : layout_.workers) {
      auto worker_env = BuildWorkerEnv(env_, job, who, error);
      if (!worker_env) return {};
      const int lr = who.local_rank;
      WorkerStreams streams;
      streams.local_rank = lr;
      streams.prefix = FormatLinePrefix(prefix_template, options_.role, who.rank, lr);
      // An empty filter shows every rank, as torchrun's does.
      const bool shown = !options_.local_ranks_filter || options_.local_ranks_filter->empty() ||
                         options_.local_ranks_filter->count(lr);
      const bool files = log_dir_->enabled();
      streams.stdout_route =
          ResolveStreamRoute(options_.redirects.stdout_for(lr) || options_.tee.stdout_for(lr),
                             options_.tee.stdout_for(lr), shown, files);
      streams.stderr_route =
          ResolveStreamRoute(options_.redirects.stderr_for(lr) || options_.tee.stderr_for(lr),
                             options_.tee.stderr_for(lr), shown, files);
      streams.stdout_log = log_dir_->StdoutLog(restart_count_, lr);
      streams.stderr_log = log_dir_->StderrLog(restart_count_, lr);
      ChildStdio stdio = output_->Open(streams);
      ProcessSpec spec;
      spec.id = lr;
      spec.argv = Argv(command, lr);
      spec.env = std::move(worker_env->entries);
      spec.stdout_fd = stdio.stdout_fd;
      spec.stderr_fd = stdio.stderr_fd;
      specs.push_back(std::move(spec));
    }
    return specs;
  }

  void OnSignal(int signo) {
    if (multi_ && !multi_->round_end()) {
      RoundEnd notice = multi_->Notice(RoundEndKind::kAgentStopped);
      notice.detail = "received " + SignalName(signo);
      multi_->PublishEnd(notice);
    }
    if (supervisor_ && supervisor_->OnSignal(signo)) {
      Say("received " + SignalName(signo) + "; forwarding it to the workers; workers still " +
          "running after " + std::to_string(options_.shutdown_timeout.count()) +
          " s get SIGKILL (--shutdown-timeout)");
      interrupted_by_ = multi_ ? signo : interrupted_by_;
      return;
    }
    if (multi_ && (rendezvous_pending_ || finishing_)) {
      interrupted_by_ = signo;
      if (finishing_) {
        Say("received " + SignalName(signo) + " during the exit barrier; exiting");
        return End(1);
      }
      multi_->CancelJoin();
      return;
    }
    // Between attempts or while draining: nothing to forward, stop now.
    Say("received " + SignalName(signo) + "; stopping");
    interrupted_by_ = signo;
  }

  void OnAttemptDone(const AttemptResult& result) {
    for (const WorkerExitEvent& stuck : result.unreaped)
      Say("worker local rank " + std::to_string(stuck.id) + " (pid " + std::to_string(stuck.pid) +
          ") did not die after SIGKILL (uninterruptible sleep?); abandoning it");
    output_->Drain(kDrainGrace, [this, result] { Conclude(result); });
  }

  void Conclude(const AttemptResult& result) {
    output_.reset();
    if (multi_) return ConcludeMultiHost(result);
    if (interrupted_by_ != 0 && result.outcome != AttemptOutcome::kSignaled) {
      return End(1);
    }
    switch (result.outcome) {
      case AttemptOutcome::kSucceeded:
        return End(0);
      case AttemptOutcome::kRestart: {
        ReportFailures(result, /*final=*/false);
        ++restart_count_;
        Say("worker group failed; restarting it (restart " + std::to_string(restart_count_) +
            " of " + std::to_string(options_.max_restarts) + ")");
        return StartAttempt();
      }
      case AttemptOutcome::kFailed:
      case AttemptOutcome::kStopped:
        ReportFailures(result, /*final=*/true);
        return End(1);
      case AttemptOutcome::kSignaled:
        Say("workers stopped after " + SignalName(result.signal) + "; exiting with code 1");
        return End(1);
    }
  }

  // The failure summary on stderr, the "failed (exitcode: ...)" lines users grep for, and
  // the agent's own error file when its parent asked for one.
  void ReportFailures(const AttemptResult& result, bool final) {
    const CommandSpec command = Command();
    const std::string binary = Argv(command, 0).front();
    std::vector<FailureRecord> records;
    for (const ExitRecord& exit : result.exits) {
      if (exit.role == ExitRole::kSucceeded) continue;
      FailureRecord record;
      record.local_rank = exit.event.id;
      record.global_rank = layout_.base_rank + exit.event.id;
      record.pid = exit.event.pid;
      record.exit = exit.event.exit;
      record.time = exit.event.time;
      record.host = Host();
      record.error_file = log_dir_->ErrorFile(result.restart_count, exit.event.id).string();
      record.killed_by_teardown = exit.role == ExitRole::kStopped;
      if (!record.killed_by_teardown) Say(FailedLogLine(record, binary));
      records.push_back(std::move(record));
    }
    if (records.empty() || !final) return;
    const bool logged = !(options_.redirects == StdSpec()) || !(options_.tee == StdSpec());
    if (logged && log_dir_->enabled()) {
      Say("the workers' stdout.log and stderr.log are in " +
          log_dir_->AttemptDir(result.restart_count).string());
    }
    auto failures = LoadWorkerFailures(std::move(records));
    const std::string entrypoint = EntrypointName(command);
    const std::string summary = FormatFailureSummary(entrypoint, failures);
    err_.Write(summary);
    if (auto path = Lookup(env_, env_names::kErrorFile); path && !path->empty()) {
      try {
        WriteErrorFile(*path,
                       AgentErrorDocument(failures[RootCauseIndex(failures)], entrypoint, summary));
      } catch (const std::exception& e) {
        Say("cannot write the error file " + *path + ": " + e.what());
      }
    }
  }

  const std::string& Host() {
    if (host_.empty()) host_ = FullyQualifiedHostName();
    return host_;
  }

  // A failure of the agent itself (not of a worker): stop whatever runs and exit 1.
  void Fail(const std::string& message) {
    Say("error: " + message);
    if (multi_) {
      RoundEnd notice = multi_->Notice(RoundEndKind::kAgentStopped);
      notice.detail = message;
      multi_->PublishEnd(notice);
    }
    if (group_ && group_->running() > 0) {
      group_->StopAll(SIGTERM, options_.shutdown_timeout, [this](const StopResult&) { End(1); });
      return;
    }
    End(1);
  }

  void End(int code) {
    if (multi_ && store_ && !store_lingered_) return LingerForPeers(code);
    exit_code_ = code;
    signals_.reset();
    if (store_) store_->Stop();
    auto deadline = std::chrono::steady_clock::now() + kFinalFlush;
    out_.Flush(deadline, [] {});
    err_.Flush(deadline, [this] { io_.stop(); });
  }

  // The store's host stays up (bounded) until the other hosts have hung up, so they can read
  // the round's end or a config error instead of finding the store gone.
  void LingerForPeers(int code) {
    store_lingered_ = true;
    multi_->CloseChannel();
    multi_->CancelJoin();
    auto deadline = std::chrono::steady_clock::now() + kStoreLinger;
    auto timer = std::make_shared<boost::asio::steady_timer>(io_);
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [this, code, deadline, timer, poll] {
      if (store_->connection_count() == 0 || std::chrono::steady_clock::now() >= deadline) {
        // Ending from a posted handler: resetting *poll here destroys this lambda's captures.
        boost::asio::post(io_, [this, code, poll] {
          *poll = nullptr;  // breaks the self-reference
          End(code);
        });
        return;
      }
      timer->expires_after(std::chrono::milliseconds(20));
      timer->async_wait([poll](const boost::system::error_code&) {
        if (*poll) (*poll)();
      });
    };
    (*poll)();
  }

  boost::asio::io_context io_;
  LaunchOptions options_;
  EnvMap env_;
  JobSentinel* sentinel_;
  ConsoleWriter out_;
  std::unique_ptr<ConsoleWriter> separate_err_;
  ConsoleWriter& err_;

  std::string run_id_;
  std::string master_addr_;
  int master_port_ = 0;
  bool port_was_chosen_ = false;
  std::optional<LogDir> log_dir_;
  std::unique_ptr<StoreServer> store_;
  std::unique_ptr<MultiHostSession> multi_;          // multi-host jobs only
  std::unique_ptr<TappedWorkerGroup> tapped_group_;  // multi-host jobs only
  std::optional<RoundTransition> next_round_;        // how the last round ended
  bool rendezvous_pending_ = false;
  bool finishing_ = false;       // in the exit barrier
  bool stop_requested_ = false;  // the workers are stopped because another host asked
  bool store_lingered_ = false;
  std::unique_ptr<WorkerGroup> group_;
  std::unique_ptr<Supervisor> supervisor_;
  std::unique_ptr<SignalWatch> signals_;
  std::unique_ptr<WorkerOutput> output_;
  RankLayout layout_;
  int restart_count_ = 0;
  int interrupted_by_ = 0;
  int exit_code_ = 1;
  std::string host_;
};

Agent::Agent(LaunchOptions options, EnvMap environment, JobSentinel* sentinel)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(environment), sentinel)) {}
Agent::~Agent() = default;
int Agent::Run() { return impl_->Run(); }

}  // namespace cpplaunch
