#include "launcher/job/worker_specs.h"

#include "launcher/output/line_prefixer.h"

namespace cpplaunch {
namespace {

void ThroughAgent(StreamRoute& route, std::filesystem::path& log) {
  if (route != StreamRoute::kInherit) return;
  route = StreamRoute::kTee;
  log.clear();  // console only, as the inherited stream was
}

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

JobInfo SharedJobInfo(const LaunchOptions& options, const AttemptFacts& facts,
                      const LogDir& log_dir) {
  JobInfo job;
  job.role = options.role;
  job.master_addr = facts.master_addr;
  job.master_port = facts.master_port;
  job.restart_count = facts.restart_count;
  job.max_restarts = options.max_restarts;
  job.run_id = facts.run_id;
  // rank0: worker rank 0 hosts the workers' store at MASTER_ADDR:MASTER_PORT.
  job.use_agent_store = options.worker_store == WorkerStore::kAgent;
  job.signals_to_handle = options.signals_to_handle_text;
  job.virtual_local_rank = options.virtual_local_rank;
  // By reference: the JobInfo lives only inside BuildWorkerSpecs, log_dir beyond it.
  job.error_file_for = [&log_dir, attempt = facts.restart_count](int local_rank) {
    return log_dir.ErrorFile(attempt, local_rank).string();
  };
  return job;
}

WorkerStreams Streams(const LaunchOptions& options, const EnvMap& agent_env,
                      const WorkerIdentity& who, int restart_count, const LogDir& log_dir) {
  const int lr = who.local_rank;
  WorkerStreams streams;
  streams.local_rank = lr;
  streams.prefix = FormatLinePrefix(Lookup(agent_env, "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"),
                                    options.role, who.rank, lr);
  // An empty filter shows every rank, as torchrun's does.
  const bool shown = !options.local_ranks_filter || options.local_ranks_filter->empty() ||
                     options.local_ranks_filter->count(lr);
  const bool files = log_dir.enabled();
  streams.stdout_route =
      ResolveStreamRoute(options.redirects.stdout_for(lr) || options.tee.stdout_for(lr),
                         options.tee.stdout_for(lr), shown, files);
  streams.stderr_route =
      ResolveStreamRoute(options.redirects.stderr_for(lr) || options.tee.stderr_for(lr),
                         options.tee.stderr_for(lr), shown, files);
  // A hidden rank's stderr goes to its file rather than to /dev/null, even without -r/-t: a
  // failure's traceback must survive --local-ranks-filter (the summary shows its last lines).
  if (!shown && files && streams.stderr_route == StreamRoute::kDiscard) {
    streams.stderr_route = StreamRoute::kFile;
    streams.stderr_log_for_failures = true;  // removed after the attempt if nothing was written
  }
  streams.stdout_log = log_dir.StdoutLog(restart_count, lr);
  streams.stderr_log = log_dir.StderrLog(restart_count, lr);
  return streams;
}

}  // namespace

CommandSpec WorkerCommandSpec(const LaunchOptions& options) {
  CommandSpec spec{options.training_script, options.training_script_args, options.module,
                   options.no_python, options.python};
  // torch.distributed.launch (1.x) puts it first among the script's arguments, as a macro
  // that the $local_rank substitution fills in.
  if (options.legacy_launch && !options.use_env) {
    spec.training_script_args.insert(spec.training_script_args.begin(),
                                     "--local_rank=${local_rank}");
  }
  if (options.run_path) {
    spec.module = false;
    spec.no_python = false;
    spec.training_script_args.insert(spec.training_script_args.begin(), options.training_script);
    // "-c" in the script's place: EntrypointName passes over it as over "-u", so the failure
    // title still names the script.
    spec.training_script = "-c";
  }
  return spec;
}

std::vector<std::string> WorkerArgv(const LaunchOptions& options, const EnvMap& agent_env,
                                    int local_rank) {
  auto argv = BuildWorkerCommand(agent_env, WorkerCommandSpec(options), local_rank).argv;
  // [python, -u, -c, script, args...] -> [python, -u, -c, bootstrap, script, args...]
  // Inserted after the $local_rank substitution, which must not touch the bootstrap's text.
  if (options.run_path) argv.insert(argv.begin() + 3, kRunPathBootstrap);
  return argv;
}

void RouteThroughAgent(WorkerStreams& streams) {
  // One prefix serves both streams: a stream that was tee'd keeps it (and so does the other,
  // now tee'd too); otherwise the lines stay as unprefixed as the inherited streams were.
  const bool teed =
      streams.stdout_route == StreamRoute::kTee || streams.stderr_route == StreamRoute::kTee;
  if (!teed) streams.prefix.clear();
  ThroughAgent(streams.stdout_route, streams.stdout_log);
  ThroughAgent(streams.stderr_route, streams.stderr_log);
}

std::optional<std::vector<WorkerSpec>> BuildWorkerSpecs(const LaunchOptions& options,
                                                        const EnvMap& agent_env,
                                                        const RankLayout& layout,
                                                        const AttemptFacts& facts,
                                                        const LogDir& log_dir, std::string* error) {
  const JobInfo job = SharedJobInfo(options, facts, log_dir);
  std::vector<WorkerSpec> specs;
  for (const WorkerIdentity& who : layout.workers) {
    auto worker_env = BuildWorkerEnv(agent_env, job, who, error);
    if (!worker_env) return std::nullopt;
    WorkerSpec spec;
    spec.local_rank = who.local_rank;
    spec.argv = WorkerArgv(options, agent_env, who.local_rank);
    spec.env = std::move(worker_env->entries);
    spec.streams = Streams(options, agent_env, who, facts.restart_count, log_dir);
    if (options.status_port) RouteThroughAgent(spec.streams);  // each rank's last output
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace cpplaunch
