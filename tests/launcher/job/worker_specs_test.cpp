// Who runs what: argv, environment and output routes of an attempt's workers.

#include "launcher/job/worker_specs.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "parsed_options.h"

namespace cpplaunch {
namespace {

LaunchOptions Options(std::vector<std::string> argv) { return ParsedOptions(argv); }

RankLayout Layout(int group_rank, int groups, int nproc) {
  std::string error;
  auto layout = ComputeRankLayout(group_rank, groups, nproc, &error);
  REQUIRE(layout);
  return *layout;
}

bool Has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

const AttemptFacts kFacts{"run7", "10.0.0.1", 29511, 1};

LogDir TempLogDir() {
  auto base = std::filesystem::temp_directory_path() / "cpplaunch_worker_specs_test";
  return LogDir::Create(base.string(), "run7");
}

TEST_CASE("Worker specs: argv and environment per rank", "[agent][worker_specs]") {
  const LaunchOptions options = Options({"--nproc-per-node=2", "train.py", "--lr=1"});
  const LogDir logs = LogDir::Create(std::string(LogDir::kDisabled), "run7");
  std::string error;
  auto specs = BuildWorkerSpecs(options, EnvMap{}, Layout(1, 2, 2), kFacts, logs, &error);
  REQUIRE(specs);
  REQUIRE(specs->size() == 2);
  const WorkerSpec& second = (*specs)[1];
  CHECK(second.local_rank == 1);
  CHECK(second.argv == std::vector<std::string>{"python3", "-u", "train.py", "--lr=1"});
  CHECK(Has(second.env, "RANK=3"));
  CHECK(Has(second.env, "LOCAL_RANK=1"));
  CHECK(Has(second.env, "GROUP_RANK=1"));
  CHECK(Has(second.env, "WORLD_SIZE=4"));
  CHECK(Has(second.env, "MASTER_ADDR=10.0.0.1"));
  CHECK(Has(second.env, "MASTER_PORT=29511"));
  CHECK(Has(second.env, "TORCHELASTIC_RESTART_COUNT=1"));
  CHECK(Has(second.env, "TORCHELASTIC_RUN_ID=run7"));
  // --log-dir /dev/null: no log files, the error file in the private directory.
  CHECK(Has(second.env, "TORCHELASTIC_ERROR_FILE=" + logs.ErrorFile(1, 1).string()));
  CHECK_FALSE(logs.ErrorFile(1, 1).empty());
  CHECK(second.streams.stdout_route == StreamRoute::kInherit);
  CHECK(second.streams.stdout_log.empty());
  logs.CleanUpAtExit();
}

TEST_CASE("Worker specs: --worker-store says which store the workers use",
          "[agent][worker_specs]") {
  const LogDir logs = LogDir::Create(std::string(LogDir::kDisabled), "run7");
  std::string error;
  auto agent =
      BuildWorkerSpecs(Options({"train.py"}), EnvMap{}, Layout(0, 1, 1), kFacts, logs, &error);
  REQUIRE(agent);
  CHECK(Has((*agent)[0].env, "TORCHELASTIC_USE_AGENT_STORE=True"));
  auto rank0 = BuildWorkerSpecs(Options({"--worker-store=rank0", "train.py"}), EnvMap{},
                                Layout(0, 1, 1), kFacts, logs, &error);
  REQUIRE(rank0);
  CHECK(Has((*rank0)[0].env, "TORCHELASTIC_USE_AGENT_STORE=False"));
  CHECK(Has((*rank0)[0].env, "MASTER_PORT=29511"));  // the round's, as given
  logs.CleanUpAtExit();
}

TEST_CASE("Worker specs: --run-path runs the script through the runpy bootstrap",
          "[agent][worker_specs]") {
  const LaunchOptions options = Options({"--run-path", "train.py", "a"});
  const std::vector<std::string> argv = WorkerArgv(options, EnvMap{}, 0);
  REQUIRE(argv.size() == 6);
  CHECK(argv[0] == "python3");
  CHECK(argv[2] == "-c");
  CHECK(argv[3].find("runpy.run_path") != std::string::npos);
  CHECK(argv[4] == "train.py");
  CHECK(argv[5] == "a");
  CHECK(EntrypointName(WorkerCommandSpec(options)) == "train.py");
}

TEST_CASE("Worker specs: --legacy-launch passes --local_rank=N first, as the 1.x module",
          "[agent][worker_specs]") {
  using Argv = std::vector<std::string>;
  CHECK(WorkerArgv(Options({"--legacy-launch", "train.py", "--epochs", "3"}), EnvMap{}, 2) ==
        Argv{"python3", "-u", "train.py", "--local_rank=2", "--epochs", "3"});
  CHECK(WorkerArgv(Options({"--legacy-launch", "-m", "pkg.train"}), EnvMap{}, 1) ==
        Argv{"python3", "-u", "-m", "pkg.train", "--local_rank=1"});
  CHECK(WorkerArgv(Options({"--legacy-launch", "--use-env", "train.py", "x"}), EnvMap{}, 1) ==
        Argv{"python3", "-u", "train.py", "x"});
  CHECK(WorkerArgv(Options({"train.py", "x"}), EnvMap{}, 1) ==
        Argv{"python3", "-u", "train.py", "x"});
  // --run-path: the script, then the flag, as torch.distributed.launch builds it.
  const Argv run_path =
      WorkerArgv(Options({"--legacy-launch", "--run-path", "t.py", "a"}), EnvMap{}, 3);
  REQUIRE(run_path.size() == 7);
  CHECK(Argv(run_path.begin() + 4, run_path.end()) == Argv{"t.py", "--local_rank=3", "a"});
}

TEST_CASE("Worker specs: tee, filters and log files", "[agent][worker_specs]") {
  const LaunchOptions options = Options(
      {"--nproc-per-node=2", "--tee=3", "--local-ranks-filter=0", "--no-python", "/bin/true"});
  const LogDir logs = TempLogDir();
  std::string error;
  auto specs = BuildWorkerSpecs(options, EnvMap{}, Layout(0, 1, 2), kFacts, logs, &error);
  REQUIRE(specs);
  const WorkerStreams& shown = (*specs)[0].streams;
  const WorkerStreams& hidden = (*specs)[1].streams;
  CHECK((*specs)[0].argv == std::vector<std::string>{"/bin/true"});
  CHECK(shown.prefix == "[default0]:");
  CHECK(shown.stdout_route == StreamRoute::kTee);
  CHECK(shown.stderr_route == StreamRoute::kTee);
  CHECK(shown.stdout_log == logs.StdoutLog(1, 0));
  CHECK(shown.stderr_log == logs.StderrLog(1, 0));
  CHECK(hidden.stdout_route == StreamRoute::kFile);  // a hidden rank keeps its files
  CHECK_FALSE(hidden.stderr_log_for_failures);       // -t asked for them
  CHECK(Has((*specs)[1].env, "TORCHELASTIC_ERROR_FILE=" + logs.ErrorFile(1, 1).string()));
  std::filesystem::remove_all(logs.run_dir());
}

TEST_CASE("Worker specs: TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE gives each line its global rank",
          "[agent][worker_specs]") {
  // Group rank 1 of 2 with 2 workers each: local ranks 0 and 1 are global ranks 2 and 3, so a
  // console shared by every host can tell them from group rank 0's.
  const LaunchOptions options =
      Options({"--nproc-per-node=2", "--role=trainer", "--tee=3", "--no-python", "/bin/true"});
  const LogDir logs = LogDir::Create(std::string(LogDir::kDisabled), "run7");
  const EnvMap env{
      {"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "[${role_name}${rank}|${local_rank}]:"}};
  std::string error;
  auto specs = BuildWorkerSpecs(options, env, Layout(1, 2, 2), kFacts, logs, &error);
  REQUIRE(specs);
  CHECK((*specs)[0].streams.prefix == "[trainer2|0]:");
  CHECK((*specs)[1].streams.prefix == "[trainer3|1]:");
  auto plain = BuildWorkerSpecs(options, EnvMap{}, Layout(1, 2, 2), kFacts, logs, &error);
  REQUIRE(plain);
  CHECK((*plain)[1].streams.prefix == "[trainer1]:");  // torchrun's default: the local rank
  logs.CleanUpAtExit();
}

TEST_CASE("Worker specs: a hidden rank keeps its stderr in its file without -r/-t",
          "[agent][worker_specs]") {
  const LaunchOptions options =
      Options({"--nproc-per-node=2", "--local-ranks-filter=0", "--no-python", "/bin/true"});
  const LogDir logs = TempLogDir();
  std::string error;
  auto specs = BuildWorkerSpecs(options, EnvMap{}, Layout(0, 1, 2), kFacts, logs, &error);
  REQUIRE(specs);
  const WorkerStreams& shown = (*specs)[0].streams;
  const WorkerStreams& hidden = (*specs)[1].streams;
  CHECK(shown.stderr_route == StreamRoute::kInherit);
  CHECK(hidden.stdout_route == StreamRoute::kDiscard);  // as torchrun: no file asked for
  CHECK(hidden.stderr_route == StreamRoute::kFile);     // the traceback survives
  CHECK(hidden.stderr_log == logs.StderrLog(1, 1));
  // ...in a file of the agent's, removed when empty (issue 23), unlike one -r/-t asked for.
  CHECK(hidden.stderr_log_for_failures);
  CHECK_FALSE(shown.stderr_log_for_failures);
  std::filesystem::remove_all(logs.run_dir());
}

TEST_CASE("Worker specs: --virtual-local-rank with too few visible devices fails",
          "[agent][worker_specs]") {
  const LaunchOptions options =
      Options({"--nproc-per-node=2", "--virtual-local-rank", "--no-python", "/bin/true"});
  const LogDir logs = LogDir::Create(std::string(LogDir::kDisabled), "run7");
  std::string error;
  auto specs = BuildWorkerSpecs(options, EnvMap{{"CUDA_VISIBLE_DEVICES", "3"}}, Layout(0, 1, 2),
                                kFacts, logs, &error);
  CHECK(!specs);
  CHECK(!error.empty());
  logs.CleanUpAtExit();
}

}  // namespace
}  // namespace cpplaunch
