#include "launcher/cli/engine_options.h"

#include <catch2/catch.hpp>

#include "launcher/cli/options.h"
#include "launcher/engine/rendezvous_port.h"

namespace cpplaunch {
namespace {

using Args = std::vector<std::string>;

ParseResult Parse(const Args& argv, const EnvMap& env) {
  return ParseOptions(argv, env, HostProbe{[] { return 8; }, [] { return 0; }});
}

ParseResult Ok(const Args& argv, const EnvMap& env) {
  ParseResult r = Parse(argv, env);
  INFO(r.message);
  REQUIRE(r.status == ParseStatus::kOk);
  return r;
}

// The one line of a refusal (exit 2, no usage hint).
std::string Refused(const Args& argv, const EnvMap& env) {
  ParseResult r = Parse(argv, env);
  INFO(r.message);
  REQUIRE(r.status == ParseStatus::kRefused);
  REQUIRE(r.exit_code() == 2);
  REQUIRE(r.message.find('\n') == std::string::npos);
  return r.message;
}

// Task 2 of `srun -N4 --ntasks-per-node=1` in job 1234.
EnvMap SlurmTask(int node_id) {
  return {{"SLURM_JOB_ID", "1234"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_NODEID", std::to_string(node_id)},
          {"SLURM_PROCID", std::to_string(node_id)},
          {"SLURM_NNODES", "4"},
          {"SLURM_STEP_NUM_NODES", "4"},
          {"SLURM_NTASKS", "4"},
          {"SLURM_STEP_NODELIST", "gpu-[001-004]"},
          {"SLURM_STEP_TASKS_PER_NODE", "1(x4)"}};
}

EnvMap With(EnvMap env, const EnvMap& more) {
  for (const auto& [name, value] : more) env[name] = value;
  return env;
}

TEST_CASE("an srun step fills the options a user would type, static rendezvous") {
  const ParseResult r = Ok({"--nproc-per-node=8", "train.py"}, SlurmTask(2));
  const LaunchOptions& o = r.options;
  CHECK(o.engine == "slurm");
  CHECK(o.min_nodes == 4);
  CHECK(o.max_nodes == 4);
  CHECK(o.node_rank == 2);
  CHECK(o.rdzv_backend == "static");
  CHECK(o.master_addr == "gpu-001");
  CHECK(o.master_port == DerivedPort(1234, 0));
  CHECK(o.rdzv_id == "1234.0");
  CHECK(o.nproc_per_node == 8);
  // As if typed: the store's port counts as chosen (bound as given).
  CHECK(o.IsSet("--master-port"));
  CHECK(o.sources.at("--nnodes") == OptionSource::kEngine);
  CHECK(r.notes == std::vector<std::string>{"Slurm step 1234.0: 4 nodes, this is node 2, "
                                            "rendezvous on gpu-001:" +
                                            std::to_string(DerivedPort(1234, 0))});
}

TEST_CASE("explicit flags and PET_* win over the engine") {
  const LaunchOptions o =
      Ok({"--master-addr=10.0.0.5", "--rdzv-id=mine", "--nnodes=4", "train.py"},
         With(SlurmTask(1), {{"PET_MASTER_PORT", "29600"}, {"PET_NODE_RANK", "1"}}))
          .options;
  CHECK(o.master_addr == "10.0.0.5");
  CHECK(o.master_port == 29600);
  CHECK(o.rdzv_id == "mine");
  CHECK(o.node_rank == 1);
  CHECK(o.sources.at("--master-port") == OptionSource::kEnvironment);
  // A range around the step's node count is kept.
  CHECK(Ok({"--nnodes=2:8", "--rdzv-backend=c10d", "t.py"}, SlurmTask(1)).options.max_nodes == 8);
}

TEST_CASE("a value that contradicts the engine is one line naming both, exit 2") {
  CHECK(Refused({"--nnodes=3", "train.py"}, SlurmTask(2)) ==
        "--nnodes=3 contradicts Slurm step 1234.0, which has 4 nodes (drop --nnodes, or use "
        "--engine=none to ignore the engine)");
  CHECK(Refused({"train.py"}, With(SlurmTask(2), {{"PET_NODE_RANK", "0"}})) ==
        "PET_NODE_RANK=0 contradicts Slurm step 1234.0, where this is node 2 (drop --node-rank, "
        "or use --engine=none to ignore the engine)");
  CHECK(
      Refused({"--nnodes=5:8", "train.py"}, SlurmTask(2)).starts_with("--nnodes=5:8 contradicts"));
  CHECK(Refused({"--standalone", "train.py"}, SlurmTask(0)) ==
        "--standalone runs one node, but Slurm step 1234.0 has 4 nodes (drop --standalone, or "
        "use --engine=none to ignore the engine)");
}

TEST_CASE("engine none (--engine=none, PET_ENGINE=none) ignore the step") {
  const LaunchOptions o = Ok({"--engine=none", "train.py"}, SlurmTask(2)).options;
  CHECK(o.engine == "none");
  CHECK(o.max_nodes == 1);
  CHECK(o.master_addr == "127.0.0.1");
  CHECK(Ok({"train.py"}, With(SlurmTask(2), {{"PET_ENGINE", "none"}})).notes.empty());
  CHECK(Refused({"train.py"}, {{"PET_ENGINE", "lsf"}}) ==
        "PET_ENGINE=lsf: expected auto, none, slurm, mpi or k8s");
  ParseResult bad = Parse({"--engine=lsf", "train.py"}, {});
  CHECK(bad.status == ParseStatus::kUsageError);  // argparse's choice check
}

TEST_CASE("c10d: the endpoint and is_host come from the engine") {
  LaunchOptions o = Ok({"--rdzv-backend=c10d", "train.py"}, SlurmTask(0)).options;
  CHECK(o.rdzv_endpoint == "gpu-001:" + std::to_string(DerivedPort(1234, 0)));
  CHECK(o.rdzv.is_host == true);
  o = Ok({"--rdzv-backend=c10d", "--rdzv-conf=timeout=60", "train.py"}, SlurmTask(3)).options;
  CHECK(o.rdzv.is_host == false);
  CHECK(o.rdzv.timings.timeout == std::chrono::seconds(60));
  // A given endpoint is the user's store: no is_host guess for it.
  o = Ok({"--rdzv-backend=c10d", "--rdzv-endpoint=store:1", "train.py"}, SlurmTask(0)).options;
  CHECK(o.rdzv_endpoint == "store:1");
  CHECK_FALSE(o.rdzv.is_host);
}

TEST_CASE("a one-node step runs as a single host") {
  EnvMap env = SlurmTask(0);
  env["SLURM_STEP_NUM_NODES"] = "1";
  env["SLURM_STEP_NODELIST"] = "gpu-007";
  env["SLURM_STEP_TASKS_PER_NODE"] = "1";
  const ParseResult r = Ok({"train.py"}, env);
  CHECK(r.options.max_nodes == 1);
  CHECK(r.options.master_addr == "127.0.0.1");
  CHECK_FALSE(r.options.IsSet("--master-port"));
  CHECK(r.options.rdzv_id == "1234.0");
  CHECK(r.notes == std::vector<std::string>{"Slurm step 1234.0: 1 node, this is node 0"});
}

TEST_CASE("the batch script: a note, nothing set") {
  const ParseResult r = Ok({"train.py"}, {{"SLURM_JOB_ID", "9"}, {"SLURM_NNODES", "2"}});
  CHECK(r.options.engine == "none");
  CHECK(r.options.max_nodes == 1);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].starts_with("Slurm job 9, but not inside an srun step"));
}

TEST_CASE("several tasks per node: the refusal names the srun command") {
  EnvMap env = SlurmTask(0);
  env["SLURM_STEP_TASKS_PER_NODE"] = "8(x4)";
  CHECK(Refused({"train.py"}, env).find("srun -N4 --ntasks-per-node=1 cpplaunch") !=
        std::string::npos);
}

TEST_CASE("MPI: nodes from the world; without an endpoint, the flag to add") {
  const EnvMap mpi{{"OMPI_COMM_WORLD_RANK", "1"},
                   {"OMPI_COMM_WORLD_SIZE", "2"},
                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}};
  CHECK(Refused({"train.py"}, mpi)
            .starts_with(
                "Open MPI job: no MPI variable names rank 0's host; add --master-addr=HOST"));
  const ParseResult r = Ok({"--master-addr=node0", "train.py"}, mpi);
  CHECK(r.options.engine == "mpi");
  CHECK(r.options.max_nodes == 2);
  CHECK(r.options.node_rank == 1);
  CHECK(r.options.master_addr == "node0");
  CHECK(r.options.master_port == 29500);  // no job id: torchrun's port
  CHECK(r.notes == std::vector<std::string>{
                       "Open MPI job: 2 nodes, this is node 1, rendezvous on node0:29500"});
  CHECK(Ok({"--rdzv-endpoint=node0:7000", "--rdzv-backend=c10d", "t.py"}, mpi)
            .options.rdzv_endpoint == "node0:7000");
  // MPI over Slurm's step variables.
  CHECK(Ok({"--master-addr=node0", "t.py"}, With(SlurmTask(3), mpi)).options.node_rank == 1);
}

TEST_CASE("PMIx rank alone: --nnodes must be given") {
  CHECK(Refused({"--master-addr=h", "t.py"}, {{"PMIX_RANK", "1"}}) ==
        "PMIx job does not say how many nodes the job has: add --nnodes=N");
  CHECK(Ok({"--master-addr=h", "--nnodes=2", "t.py"}, {{"PMIX_RANK", "1"}}).options.node_rank == 1);
}

const EnvMap kPod{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}};

TEST_CASE("Kubernetes LeaderWorkerSet") {
  const ParseResult r = Ok({"--nproc-per-node=4", "train.py"},
                           With(kPod, {{"LWS_LEADER_ADDRESS", "train-0.train.default"},
                                       {"LWS_GROUP_SIZE", "3"},
                                       {"LWS_WORKER_INDEX", "2"}}));
  CHECK(r.options.engine == "k8s");
  CHECK(r.options.max_nodes == 3);
  CHECK(r.options.node_rank == 2);
  CHECK(r.options.master_addr == "train-0.train.default");
  CHECK(r.options.master_port == 29500);
  CHECK(r.notes == std::vector<std::string>{"LeaderWorkerSet group: 3 nodes, this is node 2, "
                                            "rendezvous on train-0.train.default:29500"});
}

TEST_CASE("Kubernetes Indexed Job: the index is the node rank once an endpoint is given") {
  const EnvMap env = With(kPod, {{"JOB_COMPLETION_INDEX", "1"}});
  const ParseResult r = Ok({"--nnodes=2", "--master-addr=job-0.svc", "t.py"}, env);
  CHECK(r.options.node_rank == 1);
  CHECK(r.options.master_addr == "job-0.svc");
  CHECK(Refused({"--master-addr=job-0.svc", "t.py"}, env) ==
        "Indexed Job pod 1 does not say how many nodes the job has: add --nnodes=N");
  const ParseResult plain = Ok({"t.py"}, env);
  CHECK(plain.options.node_rank == 0);
  CHECK(plain.notes.size() == 1);
}

// Kubeflow sets PET_* only; they are torchrun's own variables and need no detection.
TEST_CASE("Kubeflow Trainer v2 and training-operator PET_* sets, exactly as torchrun reads them") {
  // TrainJob (Trainer v2): static rendezvous at node 0's pod name.
  LaunchOptions o = Ok({"train.py"}, With(kPod, {{"PET_NNODES", "2"},
                                                 {"PET_NPROC_PER_NODE", "auto"},
                                                 {"PET_NODE_RANK", "1"},
                                                 {"PET_MASTER_ADDR", "tj-node-0-0.tj"},
                                                 {"PET_MASTER_PORT", "29500"}}))
                        .options;
  CHECK(o.engine == "none");
  CHECK(o.max_nodes == 2);
  CHECK(o.node_rank == 1);
  CHECK(o.nproc_per_node == 8);  // no GPU on the fake host: CPUs
  CHECK(o.master_addr == "tj-node-0-0.tj");
  // PyTorchJob with elasticPolicy (training-operator v1).
  o = Ok({"train.py"}, With(kPod, {{"PET_RDZV_ENDPOINT", "pj-worker-0:23456"},
                                   {"PET_RDZV_BACKEND", "c10d"},
                                   {"PET_NNODES", "1:3"},
                                   {"PET_MAX_RESTARTS", "3"},
                                   {"PET_RDZV_ID", "pj"},
                                   {"PET_RDZV_CONF", "join_timeout=100"}}))
          .options;
  CHECK(o.rdzv_backend == "c10d");
  CHECK(o.rdzv_endpoint == "pj-worker-0:23456");
  CHECK(o.min_nodes == 1);
  CHECK(o.max_nodes == 3);
  CHECK(o.rdzv.timings.join_timeout == std::chrono::seconds(100));
  // torchrun's int("") fails on the operator's PET_STANDALONE="": so does cpplaunch, exit 1.
  ParseResult standalone = Parse({"t.py"}, {{"PET_STANDALONE", ""}});
  CHECK(standalone.status == ParseStatus::kValueError);
}

TEST_CASE("engine spares: --spares=K runs all but K of the hosts over c10d") {
  const ParseResult r = Ok({"--spares=1", "--nproc-per-node=8", "train.py"}, SlurmTask(2));
  const LaunchOptions& o = r.options;
  CHECK(o.min_nodes == 3);
  CHECK(o.max_nodes == 3);
  CHECK(o.rdzv_backend == "c10d");
  CHECK(o.rdzv_endpoint == "gpu-001:" + std::to_string(DerivedPort(1234, 0)));
  CHECK(o.rdzv.is_host == false);
  CHECK(Ok({"--spares=1", "train.py"}, SlurmTask(0)).options.rdzv.is_host == true);
  CHECK(r.notes == std::vector<std::string>{"Slurm step 1234.0: 3:3 nodes running and 1 spare, "
                                            "this is node 2, rendezvous on gpu-001:" +
                                            std::to_string(DerivedPort(1234, 0))});
  // The leaf switch places spares, unless --rdzv-conf names a segment; not for a static job.
  const EnvMap racked = With(SlurmTask(2), {{"SLURM_TOPOLOGY_ADDR", "top.leaf2.gpu-003"}});
  CHECK(Ok({"--spares=1", "train.py"}, racked).options.rdzv.segment == "leaf2");
  CHECK(Ok({"--spares=1", "--rdzv-conf=segment=mine", "train.py"}, racked).options.rdzv.segment ==
        "mine");
  CHECK(Ok({"train.py"}, racked).options.rdzv.segment.empty());
  // PET_SPARES as well, and etcd-v3 is elastic too.
  CHECK(Ok({"train.py"}, With(SlurmTask(1), {{"PET_SPARES", "2"}})).options.max_nodes == 2);
}

TEST_CASE("engine spares: each refusal of --spares is one line") {
  CHECK(Refused({"--spares=1", "--nnodes=3", "train.py"}, SlurmTask(2)) ==
        "--spares=1 and --nnodes=3: give one of them (--spares=K runs all but K of the engine's "
        "hosts)");
  CHECK(Refused({"--spares=3", "train.py"}, SlurmTask(2)) ==
        "--spares=3 leaves fewer than 2 hosts to run: Slurm step 1234.0 has 4 nodes");
  CHECK(Refused({"--spares=-1", "train.py"}, SlurmTask(2)) ==
        "--spares=-1: the number of spare hosts cannot be negative");
  CHECK(Refused({"--spares=1", "--rdzv-backend=static", "train.py"}, SlurmTask(2)) ==
        "--spares=1 needs an elastic rendezvous: use --rdzv-backend=c10d (or etcd-v3), not "
        "--rdzv-backend=static");
  CHECK(Refused({"--spares=1", "--master-addr=job-0.svc", "t.py"},
                With(kPod, {{"JOB_COMPLETION_INDEX", "1"}})) ==
        "--spares=1 needs the number of hosts, which Indexed Job pod 1 does not say: start the "
        "extra hosts yourself with --nnodes=MIN:MAX");
  CHECK(Refused({"--spares=1", "--nnodes=2", "train.py"}, {}) ==
        "--spares=1 needs an engine that says how many hosts the job has (Slurm, MPI or "
        "Kubernetes); without one, start the extra hosts yourself with --nnodes=MIN:MAX");
}

}  // namespace
}  // namespace cpplaunch
