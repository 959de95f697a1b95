#include "launcher/cli/options.h"

#include <catch2/catch.hpp>
#include <csignal>

namespace cpplaunch {
namespace {

using Args = std::vector<std::string>;
using std::chrono::milliseconds;
using std::chrono::seconds;

HostProbe FakeHost(int cpus, int gpus) {
  return {[cpus] { return cpus; }, [gpus] { return gpus; }};
}

ParseResult Parse(const Args& argv, const EnvMap& env = {}, HostProbe host = FakeHost(8, 0)) {
  return ParseOptions(argv, env, host);
}

LaunchOptions Ok(const Args& argv, const EnvMap& env = {}, HostProbe host = FakeHost(8, 0)) {
  ParseResult r = Parse(argv, env, std::move(host));
  INFO(r.message);
  REQUIRE(r.status == ParseStatus::kOk);
  REQUIRE(r.exit_code() == 0);
  return r.options;
}

// The message of a usage error (exit 2).
std::string UsageError(const Args& argv, const EnvMap& env = {}) {
  ParseResult r = Parse(argv, env);
  REQUIRE(r.status == ParseStatus::kUsageError);
  REQUIRE(r.exit_code() == 2);
  return r.message;
}

// The message of a refusal (one line, exit 2).
std::string Refused(const Args& argv, const EnvMap& env = {}) {
  ParseResult r = Parse(argv, env);
  INFO(r.message);
  REQUIRE(r.status == ParseStatus::kRefused);
  REQUIRE(r.exit_code() == 2);
  return r.message;
}

// The message of a value error (exit 1).
std::string ValueError(const Args& argv, const EnvMap& env = {}, HostProbe host = FakeHost(8, 0)) {
  ParseResult r = Parse(argv, env, std::move(host));
  INFO(r.message);
  REQUIRE(r.status == ParseStatus::kValueError);
  REQUIRE(r.exit_code() == 1);
  return r.message;
}

TEST_CASE("defaults match newest torchrun") {
  const LaunchOptions o = Ok({"train.py"});
  CHECK(o.min_nodes == 1);
  CHECK(o.max_nodes == 1);
  CHECK(o.nproc_per_node == 1);
  CHECK(o.nproc_per_node_text == "1");
  CHECK(o.rdzv_backend == "static");
  CHECK(o.rdzv_endpoint.empty());
  CHECK(o.rdzv_id == "none");
  CHECK(o.rdzv == RdzvSettings{});
  CHECK_FALSE(o.standalone);
  CHECK(o.max_restarts == 0);
  CHECK(o.monitor_interval == milliseconds(100));
  CHECK(o.start_method == "spawn");
  CHECK(o.event_log_handler == "null");
  CHECK(o.role == "default");
  CHECK_FALSE(o.module);
  CHECK_FALSE(o.no_python);
  CHECK_FALSE(o.run_path);
  CHECK_FALSE(o.log_dir);
  CHECK(o.redirects == StdSpec());
  CHECK(o.tee == StdSpec());
  CHECK_FALSE(o.local_ranks_filter);
  CHECK(o.duplicate_stdout_filters.empty());
  CHECK(o.duplicate_stderr_filters.empty());
  CHECK(o.node_rank == 0);
  CHECK(o.master_addr == "127.0.0.1");
  CHECK(o.master_port == 29500);
  CHECK_FALSE(o.local_addr);
  CHECK_FALSE(o.logs_specs);
  CHECK_FALSE(o.numa_binding);
  CHECK(o.signals_to_handle_text == "SIGTERM,SIGINT,SIGHUP,SIGQUIT");
  CHECK(o.signals_to_handle == std::vector<int>{SIGTERM, SIGINT, SIGHUP, SIGQUIT});
  CHECK(o.shutdown_timeout == seconds(30));
  CHECK_FALSE(o.virtual_local_rank);
  CHECK(o.training_script == "train.py");
  CHECK(o.training_script_args.empty());
  CHECK(o.sources.empty());
}

TEST_CASE("every option in both spellings, with = and with a separate value") {
  const Args dash = {"--nnodes=1:3",
                     "--nproc-per-node=2",
                     "--rdzv-backend=c10d",
                     "--rdzv-endpoint=h:1234",
                     "--rdzv-id=j1",
                     "--rdzv-conf=timeout=5",
                     "--standalone",
                     "--max-restarts=2",
                     "--monitor-interval=0.5",
                     "--start-method=fork",
                     "--event-log-handler=console",
                     "--role=r",
                     "--run-path",
                     "--log-dir=/tmp/l",
                     "--redirects=1",
                     "--tee=2",
                     "--local-ranks-filter=0,1",
                     "--duplicate-stdout-filters=a",
                     "--duplicate-stderr-filters=b",
                     "--node-rank=1",
                     "--master-addr=m",
                     "--master-port=0",
                     "--local-addr=la",
                     "--logs-specs=ls",
                     "--numa-binding=node",
                     "--signals-to-handle=SIGUSR1",
                     "--shutdown-timeout=7",
                     "--virtual-local-rank",
                     "--module",
                     "s"};
  Args underscore;
  for (std::string a : dash) {
    const size_t eq = a.find('=');
    std::string name = a.substr(0, eq);
    for (size_t i = 2; i < name.size(); ++i) {
      if (name[i] == '-') name[i] = '_';
    }
    underscore.push_back(name);
    if (eq != std::string::npos) underscore.push_back(a.substr(eq + 1));
  }
  for (const Args& argv : {dash, underscore}) {
    const LaunchOptions o = Ok(argv);
    CHECK(o.max_nodes == 3);
    CHECK(o.nproc_per_node == 2);
    CHECK(o.rdzv_backend == "c10d");
    CHECK(o.rdzv_endpoint == "h:1234");
    CHECK(o.rdzv_id == "j1");
    CHECK(o.rdzv.timings.timeout == seconds(5));
    CHECK(o.standalone);
    CHECK(o.max_restarts == 2);
    CHECK(o.monitor_interval == milliseconds(500));
    CHECK(o.start_method == "fork");
    CHECK(o.event_log_handler == "console");
    CHECK(o.role == "r");
    CHECK(o.run_path);
    CHECK(o.log_dir == "/tmp/l");
    CHECK(o.redirects.bits_for(0) == 1);
    CHECK(o.tee.bits_for(0) == 2);
    CHECK(o.local_ranks_filter == std::set<int>{0, 1});
    CHECK(o.duplicate_stdout_filters == Args{"a"});
    CHECK(o.duplicate_stderr_filters == Args{"b"});
    CHECK(o.node_rank == 1);
    CHECK(o.master_addr == "m");
    CHECK(o.master_port == 0);
    CHECK(o.local_addr == "la");
    CHECK(o.logs_specs == "ls");
    CHECK(o.numa_binding == "node");
    CHECK(o.signals_to_handle == std::vector<int>{SIGUSR1});
    CHECK(o.shutdown_timeout == seconds(7));
    CHECK(o.virtual_local_rank);
    CHECK(o.module);
    CHECK(o.training_script == "s");
    CHECK(o.sources.size() == 29);
    CHECK(o.sources.at("--nproc-per-node") == OptionSource::kCommandLine);
  }
}

TEST_CASE("short options: -r -t -m, glued values and clusters") {
  CHECK(Ok({"-r", "3", "s"}).redirects.bits_for(0) == 3);
  CHECK(Ok({"-r3", "s"}).redirects.bits_for(0) == 3);
  CHECK(Ok({"-r=3", "s"}).redirects.bits_for(0) == 3);
  CHECK(Ok({"-t0:1,1:2", "s"}).tee.bits_for(1) == 2);
  CHECK(Ok({"-m", "pkg.mod"}).module);
  const LaunchOptions cluster = Ok({"-mr3", "s"});
  CHECK(cluster.module);
  CHECK(cluster.redirects.bits_for(0) == 3);
  const LaunchOptions split = Ok({"-mr", "2", "s"});
  CHECK(split.module);
  CHECK(split.redirects.bits_for(0) == 2);
  CHECK(UsageError({"-mx", "s"}) == "argument -m/--module: ignored explicit argument 'x'");
  CHECK(UsageError({"-m=1", "s"}) == "argument -m/--module: ignored explicit argument '1'");
}

TEST_CASE("unique prefixes are accepted, both spellings count as one candidate") {
  CHECK(Ok({"--nproc", "3", "s"}).nproc_per_node == 3);
  CHECK(Ok({"--nproc_per=3", "s"}).nproc_per_node == 3);
  CHECK(Ok({"--no-", "s"}).no_python);
  CHECK(Ok({"--no_p", "s"}).no_python);
  CHECK(Ok({"--stand", "s"}).standalone);
  CHECK(Ok({"--redi", "1", "s"}).redirects.bits_for(0) == 1);
  CHECK(Ok({"--max-r", "4", "s"}).max_restarts == 4);
  CHECK(Ok({"--nn", "2", "s"}).max_nodes == 2);
}

TEST_CASE("ambiguous prefixes are usage errors listing the candidates") {
  CHECK(UsageError({"--no", "s"}) ==
        "ambiguous option: --no could match --no-python, --no_python, --node-rank, --node_rank");
  CHECK(UsageError({"--rdzv", "x", "s"}).starts_with("ambiguous option: --rdzv could match "));
  CHECK(UsageError({"--n=2", "s"}).starts_with("ambiguous option: --n=2 could match --nnodes"));
  CHECK(UsageError({"--m", "s"}).find("--max-restarts") != std::string::npos);
}

TEST_CASE("the first positional is the script; everything after it is untouched") {
  const LaunchOptions o = Ok({"--nproc-per-node", "2", "train.py", "--nproc-per-node", "5", "-r",
                              "3", "--no", "--", "-h", "--bogus", "$local_rank"});
  CHECK(o.nproc_per_node == 2);
  CHECK(o.redirects.bits_for(0) == 0);
  CHECK(o.training_script == "train.py");
  CHECK(o.training_script_args ==
        Args{"--nproc-per-node", "5", "-r", "3", "--no", "--", "-h", "--bogus", "$local_rank"});
}

TEST_CASE("a bare -- ends the options: the next word is the script even if it looks like one") {
  const LaunchOptions o = Ok({"-m", "--", "-weird", "-r", "1"});
  CHECK(o.module);
  CHECK(o.training_script == "-weird");
  CHECK(o.training_script_args == Args{"-r", "1"});
  CHECK(Ok({"--", "--", "x"}).training_script == "--");
  CHECK(Ok({"-"}).training_script == "-");
  CHECK(Ok({"-5"}).training_script == "-5");  // negative numbers are positionals
}

TEST_CASE("option values that start with a dash") {
  CHECK(UsageError({"--nnodes", "-1:2", "s"}) == "argument --nnodes: expected one argument");
  // Has a space, so it is --rdzv-conf's value: the key it names is read (and is unknown).
  CHECK(Refused({"--rdzv-conf", "-x y=1", "s"}).starts_with("--rdzv-conf: unknown key '-x y'"));
  CHECK(Ok({"--role=-x", "s"}).role == "-x");
  CHECK(UsageError({"--role", "-x", "s"}) == "argument --role: expected one argument");
  CHECK(UsageError({"--role", "--", "s"}) == "argument --role: expected one argument");
  CHECK(UsageError({"-r"}) == "argument -r/--redirects: expected one argument");
  CHECK(Ok({"--role=", "s"}).role.empty());
}

TEST_CASE("help wins wherever it appears before the script") {
  for (const Args& argv : {Args{"-h"}, Args{"--help"}, Args{"--he", "s"},
                           Args{"--nproc", "2", "-h", "s"}, Args{"-mh"}, Args{"--bogus", "-h"}}) {
    ParseResult r = Parse(argv);
    CHECK(r.status == ParseStatus::kHelp);
    CHECK(r.exit_code() == 0);
    CHECK(r.message.starts_with("usage: cpplaunch"));
  }
  CHECK(Ok({"s", "-h"}).training_script_args == Args{"-h"});
}

TEST_CASE("the version option ends the parse wherever it appears before the script") {
  for (const Args& argv : {Args{"--version"}, Args{"--vers"}, Args{"--nproc", "2", "--version"},
                           Args{"--version", "-h"}, Args{"--version", "--max-restarts", "x"},
                           Args{"--bogus", "--version", "s"}}) {
    ParseResult r = Parse(argv);
    CHECK(r.status == ParseStatus::kVersion);
    CHECK(r.exit_code() == 0);
  }
  CHECK(Parse({"-h", "--version"}).status == ParseStatus::kHelp);
  CHECK(Ok({"s", "--version"}).training_script_args == Args{"--version"});
  CHECK(UsageError({"--version=1"}).find("--version") != std::string::npos);
  // The version is not set through the environment: PET_VERSION means nothing.
  CHECK(Parse({"s"}, {{"PET_VERSION", "1"}}).status == ParseStatus::kOk);
}

TEST_CASE("usage errors: missing script, unknown options, flags with values") {
  CHECK(UsageError({}) ==
        "the following arguments are required: training_script, training_script_args");
  CHECK(UsageError({"--nproc-per-node", "2"}).starts_with("the following arguments"));
  CHECK(UsageError({"--bogus", "s"}) == "unrecognized arguments: --bogus");
  CHECK(UsageError({"--bogus=1", "-x", "s"}) == "unrecognized arguments: --bogus=1 -x");
  CHECK(UsageError({"--nprocs-per-node=2", "s"}) ==
        "unrecognized arguments: --nprocs-per-node=2 (did you mean --nproc-per-node?)");
  CHECK(UsageError({"--standalone=1", "s"}) ==
        "argument --standalone: ignored explicit argument '1'");
  CHECK(UsageError({"--standalone=", "s"}) ==
        "argument --standalone: ignored explicit argument ''");
}

TEST_CASE("type and choice errors are usage errors (exit 2)") {
  CHECK(UsageError({"--max-restarts", "x", "s"}) ==
        "argument --max-restarts/--max_restarts: invalid int value: 'x'");
  CHECK(UsageError({"--master-port=1.5", "s"}) ==
        "argument --master-port/--master_port: invalid int value: '1.5'");
  CHECK(UsageError({"--monitor-interval", "fast", "s"}) ==
        "argument --monitor-interval/--monitor_interval: invalid float value: 'fast'");
  CHECK(UsageError({"--start-method", "thread", "s"}) ==
        "argument --start-method/--start_method: invalid choice: 'thread' (choose from "
        "'spawn', 'fork', 'forkserver')");
  CHECK(UsageError({"--numa-binding", "all", "s"}).find("invalid choice: 'all'") !=
        std::string::npos);
  CHECK(UsageError({"--shutdown-timeout", "1s", "s"}).find("invalid int value") !=
        std::string::npos);
}

TEST_CASE("value errors torchrun reports with exit 1") {
  CHECK(ValueError({"--nnodes", "2:1", "s"}) == "--nnodes 2:1: need 0 < MIN <= MAX");
  CHECK(ValueError({"--nnodes", "0", "s"}) == "--nnodes 0: need 0 < MIN <= MAX");
  CHECK(ValueError({"--nnodes", "1:2:3", "s"}) == "nnodes=1:2:3 is not in \"MIN:MAX\" format");
  CHECK(ValueError({"--nnodes", "a", "s"}).starts_with("--nnodes a:"));
  CHECK(ValueError({"--max-restarts=-1", "s"}) == "max_restarts must be non-negative, got -1");
  CHECK(ValueError({"-m", "--no-python", "s"}) ==
        "Don't use both the '--no-python' flag and the '--module' flag at the same time.");
  CHECK(ValueError({"--nproc-per-node", "0", "s"}).find("at least 1") != std::string::npos);
  CHECK(ValueError({"--nproc-per-node", "xpu", "s"}) == "Xpu is not available.");
  CHECK(ValueError({"--monitor-interval", "0", "s"}).starts_with("--monitor-interval 0"));
  CHECK(ValueError({"--monitor-interval", "inf", "s"}).starts_with("--monitor-interval inf"));
  CHECK(ValueError({"--shutdown-timeout=-5", "s"}) ==
        "shutdown_timeout must be non-negative, got -5");
  CHECK(Refused({"--rdzv-conf", "timeout", "s"}) ==
        "The rendezvous configuration option 'timeout' must have a value specified.");
  CHECK(ValueError({"--local-ranks-filter", "0,x", "s"}) ==
        "--local_ranks_filter must be a comma-separated list of integers e.g. "
        "--local_ranks_filter=0,1,2");
  CHECK(ValueError({"-r", "4", "s"}).starts_with("-r/--redirects: '4' does not match"));
  CHECK(ValueError({"-t", "10:1", "s"}).starts_with("-t/--tee: '10:1' does not match"));
  CHECK(ValueError({"--rdzv-backend", "zookeeper", "s"}).find("'zookeeper'") != std::string::npos);
  CHECK(ValueError({"--master-port", "70000", "s"}).starts_with("--master-port 70000"));
  CHECK(ValueError({"--node-rank", "-1", "s"}).starts_with("--node-rank must be"));
}

TEST_CASE("option --run-path takes precedence over the -m/--no-python conflict") {
  const LaunchOptions o = Ok({"--run-path", "-m", "--no-python", "s"});
  CHECK(o.run_path);
}

TEST_CASE("option --standalone skips the backend check (torchrun forces c10d)") {
  CHECK(Ok({"--standalone", "--rdzv-backend=zookeeper", "s"}).standalone);
}

TEST_CASE("nproc-per-node: cpu, gpu, auto") {
  CHECK(Ok({"--nproc-per-node", "cpu", "s"}, {}, FakeHost(6, 0)).nproc_per_node == 6);
  CHECK(Ok({"--nproc-per-node", "auto", "s"}, {}, FakeHost(6, 0)).nproc_per_node == 6);
  CHECK(Ok({"--nproc-per-node", "auto", "s"}, {}, FakeHost(6, 4)).nproc_per_node == 4);
  CHECK(Ok({"--nproc-per-node", "gpu", "s"}, {}, FakeHost(6, 4)).nproc_per_node == 4);
  const EnvMap two_visible{{"CUDA_VISIBLE_DEVICES", "1,3"}};
  CHECK(Ok({"--nproc-per-node", "gpu", "s"}, two_visible, FakeHost(6, 4)).nproc_per_node == 2);
  CHECK(Ok({"--nproc-per-node", "auto", "s"}, {{"CUDA_VISIBLE_DEVICES", ""}}, FakeHost(6, 4))
            .nproc_per_node == 6);
  CHECK(ValueError({"--nproc-per-node", "gpu", "s"}, {}, FakeHost(6, 0)) ==
        "gpu: no NVIDIA GPU is visible (CUDA_VISIBLE_DEVICES is not set)");
  CHECK(ValueError({"--nproc-per-node", "gpu", "s"}, {{"CUDA_VISIBLE_DEVICES", ""}},
                   FakeHost(6, 4)) == "gpu: no NVIDIA GPU is visible (CUDA_VISIBLE_DEVICES=)");
  CHECK(Ok({"--nproc-per-node", " 3 ", "s"}).nproc_per_node == 3);
  CHECK(Ok({"--nproc-per-node", "cpu", "s"}, {}, FakeHost(6, 0)).nproc_per_node_text == "cpu");
}

TEST_CASE("the host is probed only when needed") {
  HostProbe throwing{[]() -> int { throw std::logic_error("probed"); },
                     []() -> int { throw std::logic_error("probed"); }};
  CHECK(Ok({"--nproc-per-node", "4", "s"}, {}, throwing).nproc_per_node == 4);
}

TEST_CASE("PET_* variables supply defaults; the command line wins") {
  const EnvMap env{{"PET_NPROC_PER_NODE", "3"},
                   {"PET_NNODES", "2"},
                   {"PET_MASTER_ADDR", "10.1.1.1"},
                   {"PET_MASTER_PORT", "1234"},
                   {"PET_NODE_RANK", "1"},
                   {"PET_RDZV_CONF", "join_timeout=9"},
                   {"PET_REDIRECTS", "9:1"},
                   {"PET_TEE", "3"},
                   {"PET_ROLE", "w"},
                   {"PET_MAX_RESTARTS", "4"},
                   {"PET_MONITOR_INTERVAL", "2"},
                   {"PET_SHUTDOWN_TIMEOUT", "11"},
                   {"PET_DUPLICATE_STDOUT_FILTERS", "a,,b,c"},
                   {"PET_SIGNALS_TO_HANDLE", "SIGUSR2"},
                   {"PET_LOG_DIR", "/l"}};
  const LaunchOptions o = Ok({"s"}, env);
  CHECK(o.nproc_per_node == 3);
  CHECK(o.max_nodes == 2);
  CHECK(o.master_addr == "10.1.1.1");
  CHECK(o.master_port == 1234);
  CHECK(o.node_rank == 1);
  CHECK(o.rdzv.timings.join_timeout == seconds(9));
  CHECK(o.redirects.is_map());
  CHECK(o.tee.bits_for(5) == 3);
  CHECK(o.role == "w");
  CHECK(o.max_restarts == 4);
  CHECK(o.monitor_interval == seconds(2));
  CHECK(o.shutdown_timeout == seconds(11));
  CHECK(o.duplicate_stdout_filters == Args{"a,b", "c"});
  CHECK(o.signals_to_handle == std::vector<int>{SIGUSR2});
  CHECK(o.log_dir == "/l");
  CHECK(o.sources.at("--nproc-per-node") == OptionSource::kEnvironment);
  CHECK(o.IsSet("--master-port"));
  CHECK_FALSE(o.IsSet("--rdzv-id"));

  const LaunchOptions cli = Ok({"--nproc_per_node=5", "--master-port", "99", "s"}, env);
  CHECK(cli.nproc_per_node == 5);
  CHECK(cli.master_port == 99);
  CHECK(cli.sources.at("--nproc-per-node") == OptionSource::kCommandLine);
}

TEST_CASE("PET_* values get the option's type check but not its choices") {
  // The message names the variable: the user never typed the option.
  CHECK(UsageError({"s"}, {{"PET_MAX_RESTARTS", "many"}}) ==
        "argument --max-restarts/--max_restarts: invalid int value: 'many' (from the "
        "environment: PET_MAX_RESTARTS=many)");
  CHECK(Ok({"--max-restarts", "1", "s"}, {{"PET_MAX_RESTARTS", "many"}}).max_restarts == 1);
  CHECK(Ok({"s"}, {{"PET_START_METHOD", "thread"}}).start_method == "thread");
  CHECK(ValueError({"s"}, {{"PET_NNODES", "3:2"}}) ==
        "--nnodes 3:2: need 0 < MIN <= MAX (from the environment: PET_NNODES=3:2)");
  CHECK(ValueError({"s"}, {{"PET_SHUTDOWN_TIMEOUT", "-5"}}) ==
        "shutdown_timeout must be non-negative, got -5 (from the environment: "
        "PET_SHUTDOWN_TIMEOUT=-5)");
  CHECK(ValueError({"-t", "1", "s"}, {{"PET_REDIRECTS", "9"}})
            .ends_with("(from the environment: PET_REDIRECTS=9)"));
}

TEST_CASE("flags from PET_* parse as integers; anything else fails even with -h") {
  CHECK(Ok({"s"}, {{"PET_STANDALONE", "1"}}).standalone);
  CHECK_FALSE(Ok({"s"}, {{"PET_STANDALONE", "0"}}).standalone);
  CHECK(Ok({"s"}, {{"PET_NO_PYTHON", " 2 "}}).no_python);
  CHECK(Ok({"s"}, {{"PET_MODULE", "1"}}).module);
  CHECK(Ok({"s"}, {{"PET_VIRTUAL_LOCAL_RANK", "1"}}).virtual_local_rank);
  CHECK(Ok({"s"}, {{"PET_RUN_PATH", "1"}}).run_path);
  CHECK(Ok({"--standalone", "s"}, {{"PET_STANDALONE", "0"}}).standalone);
  CHECK(ValueError({"-h"}, {{"PET_STANDALONE", "yes"}}).starts_with("PET_STANDALONE=yes"));
  CHECK(ValueError({"s"}, {{"PET_MODULE", "1"}, {"PET_NO_PYTHON", "1"}})
            .starts_with("Don't use both"));
}

TEST_CASE("options --logs-specs and --numa-binding have no PET_ variable") {
  const LaunchOptions o = Ok({"s"}, {{"PET_LOGS_SPECS", "x"}, {"PET_NUMA_BINDING", "node"}});
  CHECK_FALSE(o.logs_specs);
  CHECK_FALSE(o.numa_binding);
  CHECK(o.sources.empty());
}

TEST_CASE("exit barrier timeout: option, then TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT, then 300 s") {
  CHECK(Ok({"s"}).exit_barrier_timeout == seconds(300));
  const EnvMap env{{"TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT", "900"}};
  CHECK(Ok({"s"}, env).exit_barrier_timeout == seconds(900));
  CHECK(Ok({"--exit-barrier-timeout", "0.25", "s"}, env).exit_barrier_timeout == milliseconds(250));
  CHECK(Ok({"--exit_barrier_timeout=2", "s"}).exit_barrier_timeout == seconds(2));
  CHECK(Ok({"s"}, {{"PET_EXIT_BARRIER_TIMEOUT", "7"}, {"TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT", "9"}})
            .exit_barrier_timeout == seconds(7));
  CHECK(Refused({"--exit-barrier-timeout=0", "s"}) ==
        "--exit-barrier-timeout 0: need a positive number of seconds (default 300)");
  CHECK(Refused({"s"}, {{"TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT", "soon"}}) ==
        "TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT soon: need a positive number of seconds (default "
        "300)");
  CHECK(UsageError({"--exit-barrier-timeout", "5m", "s"}).find("invalid float value") !=
        std::string::npos);
}

TEST_CASE("shutdown timeout: option, then TORCH_ELASTIC_SHUTDOWN_TIMEOUT, then 30 s") {
  const EnvMap env{{"TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "600"}};
  CHECK(Ok({"s"}, env).shutdown_timeout == seconds(600));
  CHECK(Ok({"--shutdown-timeout", "0", "s"}, env).shutdown_timeout == seconds(0));
  CHECK(ValueError({"s"}, {{"TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "soon"}})
            .starts_with("TORCH_ELASTIC_SHUTDOWN_TIMEOUT=soon"));
  CHECK(ValueError({"s"}, {{"TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "-1"}})
            .starts_with("shutdown_timeout must be non-negative"));
}

TEST_CASE("nnodes forms") {
  const LaunchOptions range = Ok({"--nnodes", "1:4", "s"});
  CHECK(range.min_nodes == 1);
  CHECK(range.max_nodes == 4);
  const LaunchOptions fixed = Ok({"--nnodes=3", "s"});
  CHECK(fixed.min_nodes == 3);
  CHECK(fixed.max_nodes == 3);
}

TEST_CASE("local ranks filter and duplicate filters") {
  CHECK(Ok({"--local-ranks-filter", " 2,0,2", "s"}).local_ranks_filter == std::set<int>{0, 2});
  CHECK_FALSE(Ok({"--local-ranks-filter=", "s"}).local_ranks_filter);
  CHECK(ValueError({"--local-ranks-filter", "0,", "s"}).starts_with("--local_ranks_filter"));
  CHECK(Ok({"--duplicate-stderr-filters", "x,,,y", "s"}).duplicate_stderr_filters ==
        Args{"x,", "y"});
  CHECK(Ok({"--duplicate-stdout-filters=", "s"}).duplicate_stdout_filters == Args{""});
}

TEST_CASE("signals: unknown names become warnings, not errors") {
  ParseResult r = Parse({"--signals-to-handle", "SIGTERM,SIGNOPE", "s"});
  REQUIRE(r.ok());
  CHECK(r.options.signals_to_handle == std::vector<int>{SIGTERM});
  CHECK(r.options.signals_to_handle_text == "SIGTERM,SIGNOPE");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("SIGNOPE") != std::string::npos);
}

TEST_CASE("forward signals: from the command line or PET_FORWARD_SIGNALS; none by default") {
  CHECK(Ok({"s"}).forward_signals.empty());
  CHECK(Ok({"--forward-signals", "SIGUSR1,SIGUSR2", "s"}).forward_signals ==
        std::vector<int>{SIGUSR1, SIGUSR2});
  CHECK(Ok({"--forward_signals=SIGUSR2", "s"}).forward_signals == std::vector<int>{SIGUSR2});
  CHECK(Ok({"s"}, {{"PET_FORWARD_SIGNALS", "SIGUSR1"}}).forward_signals ==
        std::vector<int>{SIGUSR1});
  CHECK(Ok({"--forward-signals=SIGUSR2", "s"}, {{"PET_FORWARD_SIGNALS", "SIGUSR1"}})
            .forward_signals == std::vector<int>{SIGUSR2});
  // Moved out of the handled list, a teardown signal may be forwarded instead.
  CHECK(Ok({"--signals-to-handle=SIGINT", "--forward-signals=SIGTERM", "s"}).forward_signals ==
        std::vector<int>{SIGTERM});
}

TEST_CASE("forward signals: bad names and overlaps are usage errors") {
  CHECK(UsageError({"--forward-signals", "USR1", "s"}) ==
        "--forward-signals: 'USR1' is not a signal name (use the SIG names, comma-separated: "
        "SIGUSR1,SIGUSR2)");
  CHECK(UsageError({"--forward-signals", "SIGKILL", "s"}) ==
        "--forward-signals: cannot forward SIGKILL: it cannot be caught");
  CHECK(UsageError({"s"}, {{"PET_FORWARD_SIGNALS", "SIGFOO"}}).find("'SIGFOO'") !=
        std::string::npos);
  // SIGTERM is in the default --signals-to-handle.
  CHECK(UsageError({"--forward-signals", "SIGUSR1,SIGTERM", "s"}) ==
        "SIGTERM is in both --forward-signals and --signals-to-handle (which tears the job down "
        "on it); leave it in one of them");
  CHECK(UsageError({"--signals-to-handle=SIGTERM,SIGUSR1", "--forward-signals=SIGUSR1", "s"})
            .starts_with("SIGUSR1 is in both"));
}

TEST_CASE("an empty --master-addr is a one-line usage error, from argv or PET_MASTER_ADDR") {
  const std::string expected =
      "--master-addr is empty; give the address of the node-rank-0 host (default 127.0.0.1)";
  CHECK(UsageError({"--master-addr=", "s"}) == expected);
  CHECK(UsageError({"--master-addr", "  ", "s"}) == expected);
  CHECK(UsageError({"s"}, {{"PET_MASTER_ADDR", ""}}) ==
        expected + " (from the environment: PET_MASTER_ADDR=)");
  CHECK(Ok({"s"}, {{"PET_MASTER_ADDR", "10.0.0.1"}}).master_addr == "10.0.0.1");
}

TEST_CASE("--master-addr and --local-addr: one host, an IPv6 literal without its brackets") {
  // PyTorch resolves MASTER_ADDR as given, and "[::1]" is no host name: the brackets go.
  CHECK(Ok({"--master-addr=[::1]", "s"}).master_addr == "::1");
  CHECK(Ok({"s"}, {{"PET_MASTER_ADDR", "[fe80::1%eth0]"}}).master_addr == "fe80::1%eth0");
  CHECK(Ok({"--local-addr=[::1]", "s"}).local_addr == "::1");
  CHECK(Ok({"--master-addr=node-0.cluster", "s"}).master_addr == "node-0.cluster");
  // The repro: '10.0.0.1 ' from a script failed at the store's bind, exit 1, "[[::1]]" for
  // brackets; now one line naming the character, exit 2.
  CHECK(Refused({"--master-addr=10.0.0.1 ", "s"}) ==
        "--master-addr '10.0.0.1 ' has ' ' at byte 9: give one host name or address of the "
        "node-rank-0 host, such as 10.0.0.1");
  CHECK_THAT(Refused({"--master-addr=[::1", "s"}), Catch::Contains("has '[' at byte 1"));
  CHECK_THAT(Refused({"--master-addr=a,b", "s"}), Catch::Contains("has ','"));
  CHECK_THAT(Refused({"--local-addr=[10.0.0.2]", "s"}), Catch::Contains("has '['"));
}

TEST_CASE("master_addr with a dynamic backend and no endpoint warns as torchrun does") {
  ParseResult r = Parse({"--rdzv-backend", "c10d", "--master-addr", "h", "s"});
  REQUIRE(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].starts_with("master_addr is only used for static"));
  CHECK(Parse({"--rdzv-backend", "c10d", "s"}).warnings.empty());
}

TEST_CASE("the rdzv conf is kept as written (launcher defaults are the agent's business)") {
  const LaunchOptions o = Ok({"--rdzv-conf", "is_host=1, read_timeout = 120", "s"});
  RdzvSettings written;
  written.is_host = true;
  written.timings.read_timeout = seconds(120);
  CHECK(o.rdzv == written);
}

TEST_CASE("a malformed --rdzv-conf value is one line and exit 2, before the agent runs") {
  // Moved from the agent's multi-host tests, where it was exit 1 after the store existed.
  CHECK(Refused({"--nnodes=1:2", "--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1:29400",
                 "--rdzv-conf=timeout=soon", "--no-python", "/bin/true"})
            .starts_with("The rendezvous configuration option 'timeout'"));
}

TEST_CASE("a static node rank outside --nnodes is a value error; c10d ignores it") {
  CHECK(ValueError({"--nnodes=2", "--node-rank=2", "s"}) ==
        "--node-rank 2 is out of range for --nnodes=2 (node ranks are 0 to 1)");
  CHECK(Ok({"--nnodes=2", "--node-rank=1", "s"}).node_rank == 1);
  CHECK(Ok({"--nnodes=2", "--node-rank=5", "--rdzv-backend=c10d", "s"}).node_rank == 5);
}

TEST_CASE("options that --standalone replaces are named in a warning") {
  ParseResult r = Parse({"--standalone", "--master-port=29530", "--rdzv-id=j", "s"});
  REQUIRE(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] ==
        "--standalone picks its own port and run id; ignoring --rdzv-id, "
        "--master-port");
  CHECK(Parse({"--standalone", "s"}).warnings.empty());
}

TEST_CASE("an unknown --nproc-per-node word is a usage error listing the accepted values") {
  const std::string expected =
      "argument --nproc-per-node/--nproc_per_node: invalid value: '4x' (give an integer, or "
      "auto, cpu or gpu)";
  CHECK(UsageError({"--nproc-per-node=4x", "s"}) == expected);
  CHECK(UsageError({"s"}, {{"PET_NPROC_PER_NODE", "4x"}}).starts_with(expected));
  CHECK(Parse({"--nproc-per-node=many", "s"}).exit_code() == 2);
}

TEST_CASE("A single host with a backend and an endpoint (--nnodes=1) says so in one line") {
  ParseResult c10d = Parse({"--nnodes=1", "--rdzv-backend=c10d", "--rdzv-endpoint=h:29731", "s"});
  REQUIRE(c10d.ok());
  REQUIRE(c10d.warnings.size() == 1);
  CHECK(c10d.warnings[0] ==
        "--nnodes=1: a single-host job; --rdzv-backend=c10d is not used, only --rdzv-endpoint's "
        "address for the store (give --nnodes=1:2 or more for an elastic job)");
  ParseResult etcd = Parse({"--rdzv-backend=etcd-v3", "--rdzv-endpoint=h:2379", "s"});
  REQUIRE(etcd.warnings.size() == 1);
  CHECK(etcd.warnings[0].starts_with(
      "--nnodes=1: a single-host job; --rdzv-backend=etcd-v3 and --rdzv-endpoint are not used"));
  CHECK(Parse({"--nnodes=1:2", "--rdzv-backend=c10d", "--rdzv-endpoint=h", "s"}).warnings.empty());
  CHECK(Parse({"--rdzv-endpoint=h:29731", "s"}).warnings.empty());  // static: the endpoint is used
}

TEST_CASE("one exit-code mapping: success, usage 2, failure 1") {
  CHECK(ExitCodeFor(ParseStatus::kOk) == ExitCode::kSuccess);
  CHECK(ExitCodeFor(ParseStatus::kHelp) == ExitCode::kSuccess);
  CHECK(ExitCodeFor(ParseStatus::kVersion) == ExitCode::kSuccess);
  CHECK(ExitCodeFor(ParseStatus::kUsageError) == ExitCode::kUsage);
  CHECK(ExitCodeFor(ParseStatus::kValueError) == ExitCode::kFailure);
  CHECK(Parse({}).exit_code() == ProcessExitCode(ExitCode::kUsage));
}

TEST_CASE("the first bad word in command-line order is the one reported") {
  CHECK(UsageError({"--max-restarts", "x", "--role", "-y", "s"}) ==
        "argument --max-restarts/--max_restarts: invalid int value: 'x'");
  CHECK(UsageError({"--role", "-y", "--max-restarts", "x", "s"}) ==
        "argument --role: expected one argument");
  CHECK(UsageError({"--master-port", "p", "--max-restarts", "x", "s"}).find("--master-port") !=
        std::string::npos);
  CHECK(UsageError({"--max-restarts", "x", "-h"}).find("invalid int value") != std::string::npos);
  CHECK(Parse({"-h", "--max-restarts", "x"}).status == ParseStatus::kHelp);
}

TEST_CASE("the last occurrence of an option wins, in either spelling") {
  CHECK(Ok({"--nproc-per-node=2", "--nproc_per_node", "3", "s"}).nproc_per_node == 3);
  CHECK(Ok({"-r", "1", "--redirects=2", "-r3", "s"}).redirects.bits_for(0) == 3);
}

TEST_CASE("short option values after '=' or glued, including ones that start with a dash") {
  CHECK(ValueError({"-r=-m", "s"}).starts_with("-r/--redirects: '-m' does not match"));
  CHECK(ValueError({"-r-m", "s"}).starts_with("-r/--redirects: '-m' does not match"));
  CHECK(ValueError({"-mr=3", "s"})
            .starts_with("-r/--redirects: '=3' does not match"));  // as argparse
}

TEST_CASE("warnings given before a value error are kept") {
  ParseResult r = Parse({"--signals-to-handle=SIGNOPE", "--rdzv-backend=zookeeper", "s"});
  CHECK(r.status == ParseStatus::kValueError);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("SIGNOPE") != std::string::npos);
}

TEST_CASE("worker store: agent by default, rank0 from the command line or PET_WORKER_STORE") {
  CHECK(Ok({"s"}).worker_store == WorkerStore::kAgent);
  CHECK(Ok({"--worker-store=rank0", "s"}).worker_store == WorkerStore::kRank0);
  CHECK(Ok({"--worker_store", "rank0", "s"}).worker_store == WorkerStore::kRank0);
  CHECK(Ok({"s"}, {{"PET_WORKER_STORE", "rank0"}}).worker_store == WorkerStore::kRank0);
  CHECK(Ok({"--worker-store=agent", "s"}, {{"PET_WORKER_STORE", "rank0"}}).worker_store ==
        WorkerStore::kAgent);
  CHECK(UsageError({"--worker-store=rank1", "s"}) ==
        "argument --worker-store/--worker_store: invalid choice: 'rank1' (choose from 'agent', "
        "'rank0')");
  CHECK(ValueError({"s"}, {{"PET_WORKER_STORE", "master"}}) ==
        "--worker-store master: need agent or rank0 (from the environment: "
        "PET_WORKER_STORE=master)");
}

TEST_CASE("legacy launch: --legacy-launch and torch.distributed.launch's --use-env") {
  const LaunchOptions plain = Ok({"train.py"});
  CHECK_FALSE(plain.legacy_launch);
  CHECK_FALSE(plain.use_env);
  const LaunchOptions legacy = Ok({"--legacy-launch", "train.py", "--use-env"});
  CHECK(legacy.legacy_launch);
  CHECK_FALSE(legacy.use_env);  // after the script: the script's argument
  CHECK(legacy.training_script_args == Args{"--use-env"});
  CHECK(Ok({"--legacy_launch", "--use_env", "train.py"}).use_env);
  CHECK(Ok({"--legacy-launch", "--use-env", "train.py"}).use_env);
  CHECK(Ok({"train.py"}, {{"PET_LEGACY_LAUNCH", "1"}}).legacy_launch);
  // torch.distributed.launch declares --use_env without the env action: no PET_USE_ENV.
  CHECK_FALSE(Ok({"train.py"}, {{"PET_USE_ENV", "1"}}).use_env);
  CHECK(ValueError({"--legacy-launch", "--no-python", "/bin/true"}) ==
        "When using the '--no-python' flag, you must also set the '--use-env' flag.");
  CHECK(Ok({"--legacy-launch", "--use-env", "--no-python", "/bin/true"}).no_python);
}

TEST_CASE("exit code: torchrun by default, worker from the command line or PET_EXIT_CODE") {
  CHECK(Ok({"s"}).exit_code_mode == ExitCodeMode::kTorchrun);
  CHECK(Ok({"--exit-code=worker", "s"}).exit_code_mode == ExitCodeMode::kWorker);
  CHECK(Ok({"--exit_code", "worker", "s"}).exit_code_mode == ExitCodeMode::kWorker);
  CHECK(Ok({"s"}, {{"PET_EXIT_CODE", "worker"}}).exit_code_mode == ExitCodeMode::kWorker);
  CHECK(Ok({"--exit-code=torchrun", "s"}, {{"PET_EXIT_CODE", "worker"}}).exit_code_mode ==
        ExitCodeMode::kTorchrun);
  CHECK(UsageError({"--exit-code=pytest", "s"}) ==
        "argument --exit-code/--exit_code: invalid choice: 'pytest' (choose from 'worker', "
        "'torchrun')");
  CHECK(ValueError({"s"}, {{"PET_EXIT_CODE", "shell"}}) ==
        "--exit-code shell: need worker or torchrun (from the environment: PET_EXIT_CODE=shell)");
}

TEST_CASE("hang timeout: off by default, seconds from the command line or PET_HANG_TIMEOUT") {
  CHECK_FALSE(Ok({"s"}).hang_timeout.has_value());
  CHECK(Ok({"--hang-timeout=5", "s"}).hang_timeout == std::chrono::seconds(5));
  CHECK(Ok({"--hang_timeout", "0.25", "s"}).hang_timeout == std::chrono::milliseconds(250));
  CHECK(Ok({"s"}, {{"PET_HANG_TIMEOUT", "90"}}).hang_timeout == std::chrono::seconds(90));
  CHECK(ValueError({"--hang-timeout=0", "s"}) ==
        "--hang-timeout 0: need a positive number of seconds");
  CHECK(ValueError({"s"}, {{"PET_HANG_TIMEOUT", "-1"}}) ==
        "--hang-timeout -1: need a positive number of seconds (from the environment: "
        "PET_HANG_TIMEOUT=-1)");
  CHECK(UsageError({"--hang-timeout=soon", "s"}).find("invalid float value: 'soon'") !=
        std::string::npos);
}

TEST_CASE("status endpoint: off by default; --status-port, or torchrun's health check port") {
  CHECK_FALSE(Ok({"s"}).status_port.has_value());
  CHECK(Ok({"s"}).status_addr == "127.0.0.1");
  CHECK(Ok({"--status-port=8931", "s"}).status_port == 8931);
  CHECK(Ok({"--status_port", "0", "s"}).status_port == 0);
  CHECK(Ok({"s"}, {{"PET_STATUS_PORT", "9000"}}).status_port == 9000);
  CHECK(Ok({"s"}, {{"TORCHELASTIC_HEALTH_CHECK_PORT", "9001"}}).status_port == 9001);
  CHECK(Ok({"--status-port=9002", "s"}, {{"TORCHELASTIC_HEALTH_CHECK_PORT", "9001"}}).status_port ==
        9002);
  CHECK(Ok({"--status-port=1", "--status-addr=::", "s"}).status_addr == "::");
  CHECK(UsageError({"--status-port=70000", "s"}) ==
        "--status-port 70000: need a TCP port, 0..65535 (0: a free port)");
  CHECK(UsageError({"s"}, {{"TORCHELASTIC_HEALTH_CHECK_PORT", "-1"}}) ==
        "TORCHELASTIC_HEALTH_CHECK_PORT -1: need a TCP port, 0..65535 (0: a free port)");
  CHECK(UsageError({"--status-port=1", "--status-addr=host-a", "s"}) ==
        "--status-addr host-a: not a numeric address; give one such as 127.0.0.1, 0.0.0.0 or ::");
  // Without a port the address is not looked at.
  CHECK_FALSE(Ok({"--status-addr=host-a", "s"}).status_port.has_value());
}

// Issue 23: a 9 KB --rdzv-id reached the store (exit 1, a 120 KB line) and left an empty
// /tmp/torchelastic_* behind; long or odd values are now one short usage error.
TEST_CASE("Long and odd option values are one short refusal, naming where they came from",
          "[cli][option_value]") {
  const std::string huge(9000, 'x');
  for (const std::string& line :
       {Refused({"--rdzv-id", huge, "s"}), Refused({"--rdzv-id=" + huge, "s"}),
        Refused({"--role", huge, "s"}), Refused({"--log-dir", huge, "s"}),
        Refused({"--rdzv-backend", huge, "s"}), Refused({"s"}, {{"PET_RDZV_ID", huge}}),
        Refused({"--rdzv-id", std::string(300, 'y'), "s"}),
        Refused({"s"}, {{"PET_RDZV_ID", std::string(300, 'y')}})}) {
    CHECK(line.size() < 300);
    CHECK(line.find('\n') == std::string::npos);
  }
  CHECK(Refused({"--rdzv-id", huge, "s"}) ==
        "--rdzv-id: a value of 9000 bytes; an option's value may have at most 8192 bytes");
  CHECK(Refused({"s"}, {{"PET_RDZV_ID", huge}}) ==
        "PET_RDZV_ID: a value of 9000 bytes; an option's value may have at most 8192 bytes");
  CHECK_THAT(Refused({"s"}, {{"PET_RDZV_ID", std::string(300, 'y')}}),
             Catch::StartsWith("--rdzv-id: a run id of 300 bytes") &&
                 Catch::EndsWith("(from the environment: PET_RDZV_ID=" + std::string(40, 'y') +
                                 "... (300 bytes))"));
  CHECK_THAT(Refused({"--rdzv-id=a/b", "s"}), Catch::Contains("may not contain '/'"));
  CHECK_THAT(Refused({"--rdzv-id=a\nb", "s"}), Catch::Contains("control character"));
  CHECK_THAT(Refused({"--role=a\nb", "s"}), Catch::Contains("control character"));
  CHECK_THAT(Refused({"--log-dir", std::string(5000, 'd'), "s"}),
             Catch::Contains("a path of 5000 bytes"));
  // What torchrun users pass is accepted; --standalone replaces the id, so it is not checked.
  CHECK(Ok({"--rdzv-id=1234567_12", "s"}).rdzv_id == "1234567_12");
  CHECK(Ok({"--rdzv-id=3f2b8c1e-9a4d-4b7e-8f21-6c0d5e4a7b93", "s"}).rdzv_id.size() == 36);
  CHECK(Ok({"--rdzv-id=", "s"}).rdzv_id.empty());
  CHECK(Parse({"--standalone", "--rdzv-id=a/b", "s"}).status == ParseStatus::kOk);
}

}  // namespace
}  // namespace cpplaunch
