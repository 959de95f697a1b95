#include "launcher/engine/slurm_step.h"

#include <catch2/catch.hpp>

#include "launcher/engine/rendezvous_port.h"

namespace cpplaunch {
namespace {

// A task of `srun -N4 --ntasks-per-node=1` in job 1234, as slurmd sets it (engines.md 2.1).
EnvMap StepTask(int node_id) {
  return {{"SLURM_JOB_ID", "1234"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", std::to_string(node_id)},
          {"SLURM_LOCALID", "0"},
          {"SLURM_NODEID", std::to_string(node_id)},
          {"SLURM_NNODES", "4"},
          {"SLURM_STEP_NUM_NODES", "4"},
          {"SLURM_JOB_NUM_NODES", "4"},
          {"SLURM_NTASKS", "4"},
          {"SLURM_JOB_NODELIST", "gpu-[001-004]"},
          {"SLURM_STEP_NODELIST", "gpu-[001-004]"},
          {"SLURM_STEP_TASKS_PER_NODE", "1(x4)"},
          {"SLURM_LAUNCH_NODE_IPADDR", "10.0.0.99"},
          {"SLURMD_NODENAME", "gpu-00" + std::to_string(node_id + 1)}};
}

EngineFacts Facts(const EnvMap& env) {
  EngineReading reading = ReadSlurmStep(env);
  INFO(reading.refusal << reading.note);
  REQUIRE(reading.facts);
  return *reading.facts;
}

std::string Refusal(const EnvMap& env) {
  EngineReading reading = ReadSlurmStep(env);
  REQUIRE_FALSE(reading.facts);
  REQUIRE_FALSE(reading.refusal.empty());
  return reading.refusal;
}

TEST_CASE("an srun step with one task per node gives nnodes, node rank, run id and store") {
  const EngineFacts facts = Facts(StepTask(2));
  CHECK(facts.engine == Engine::kSlurm);
  CHECK(facts.label == "Slurm step 1234.0");
  CHECK(facts.nnodes == 4);
  CHECK(facts.node_rank == 2);
  CHECK(facts.run_id == "1234.0");
  CHECK(facts.rdzv_host == "gpu-001");  // not SLURM_LAUNCH_NODE_IPADDR, the login node
  CHECK(facts.rdzv_port == DerivedPort(1234, 0));
}

TEST_CASE("the store's host is the step's first host, not the job's") {
  // srun -N1 -w n2 inside a 2-node job: step-relative node id and count (engines.md 2.1).
  EnvMap env = StepTask(0);
  env["SLURM_JOB_NODELIST"] = "n[1-2]";
  env["SLURM_JOB_NUM_NODES"] = "2";
  env["SLURM_STEP_NODELIST"] = "n2";
  env["SLURM_STEP_NUM_NODES"] = "1";
  env["SLURM_NNODES"] = "1";
  env["SLURM_NTASKS"] = "1";
  env["SLURM_STEP_TASKS_PER_NODE"] = "1";
  env["SLURM_STEP_ID"] = "3";
  const EngineFacts facts = Facts(env);
  CHECK(facts.nnodes == 1);
  CHECK(facts.rdzv_host == "n2");
  CHECK(facts.run_id == "1234.3");
}

TEST_CASE("older Slurm: SLURM_STEPID and SLURM_NNODES") {
  EnvMap env = StepTask(1);
  env.erase("SLURM_STEP_ID");
  env.erase("SLURM_STEP_NUM_NODES");
  env["SLURM_STEPID"] = "7";
  const EngineFacts facts = Facts(env);
  CHECK(facts.nnodes == 4);
  CHECK(facts.run_id == "1234.7");
}

TEST_CASE("the batch script outside any srun step detects nothing and says so") {
  // What the batch shell of sbatch -N2 sees: node variables, no step variables.
  EnvMap env{{"SLURM_JOB_ID", "77"},       {"SLURM_PROCID", "0"},
             {"SLURM_NODEID", "0"},        {"SLURM_LOCALID", "0"},
             {"SLURM_NNODES", "2"},        {"SLURM_JOB_NUM_NODES", "2"},
             {"SLURM_NODELIST", "n[1-2]"}, {"SLURM_JOB_NODELIST", "n[1-2]"}};
  EngineReading reading = ReadSlurmStep(env);
  CHECK_FALSE(reading.facts);
  CHECK(reading.refusal.empty());
  CHECK(reading.note ==
        "Slurm job 77, but not inside an srun step (no SLURM_STEP_ID or SLURM_STEP_NODELIST): "
        "nothing detected; to use the job's nodes run srun -N2 --ntasks-per-node=1 cpplaunch ...");
}

TEST_CASE("no Slurm job: nothing") { CHECK(ReadSlurmStep({{"HOME", "/root"}}).absent()); }

TEST_CASE("several tasks per node are refused with the srun command to use") {
  // srun -N2 -n8: 4 tasks per node, the srun-per-GPU style.
  EnvMap env = StepTask(1);
  env["SLURM_STEP_NODELIST"] = "n[1-2]";
  env["SLURM_STEP_NUM_NODES"] = "2";
  env["SLURM_NTASKS"] = "8";
  env["SLURM_STEP_TASKS_PER_NODE"] = "4(x2)";
  CHECK(Refusal(env) ==
        "Slurm step 1234.0 runs 4 tasks on this node; cpplaunch starts the workers itself and "
        "needs one task per node: srun -N2 --ntasks-per-node=1 cpplaunch --nproc-per-node=4 ... "
        "(or --engine=none to ignore Slurm)");
  // Uneven (2,1): the second node alone would be fine; the first
  // node refuses, and so the step fails as a whole.
  env["SLURM_STEP_TASKS_PER_NODE"] = "2,1";
  env["SLURM_NODEID"] = "0";
  CHECK(Refusal(env).find("runs 2 tasks") != std::string::npos);
  env["SLURM_NODEID"] = "1";
  CHECK(ReadSlurmStep(env).facts);
  // Without the per-node list, more tasks than nodes is enough to refuse.
  env.erase("SLURM_STEP_TASKS_PER_NODE");
  CHECK(Refusal(env).find("runs 4 tasks") != std::string::npos);
}

TEST_CASE("malformed step variables are one line naming the variable") {
  EnvMap env = StepTask(0);
  env["SLURM_STEP_NODELIST"] = "gpu-[001-004";
  CHECK(Refusal(env) == "Slurm step 1234.0: SLURM_STEP_NODELIST='gpu-[001-004': unbalanced '['");
  env = StepTask(0);
  env["SLURM_STEP_NODELIST"] = "gpu-[001-003]";
  CHECK(Refusal(env).find("names 3 hosts, SLURM_STEP_NUM_NODES=4") != std::string::npos);
  env = StepTask(0);
  env["SLURM_NODEID"] = "x";
  CHECK(Refusal(env) == "Slurm step: SLURM_NODEID='x' is not a non-negative integer");
  env = StepTask(0);
  env["SLURM_STEP_TASKS_PER_NODE"] = "1(x";
  CHECK(Refusal(env).find("SLURM_STEP_TASKS_PER_NODE='1(x'") != std::string::npos);
}

TEST_CASE("tasks per node: Slurm's compressed counts") {
  std::string error;
  CHECK(ExpandTasksPerNode("2(x3),1", &error) == std::vector<int>{2, 2, 2, 1});
  CHECK(ExpandTasksPerNode("1", &error) == std::vector<int>{1});
  CHECK(ExpandTasksPerNode("4(x2)", &error) == std::vector<int>{4, 4});
  CHECK_FALSE(ExpandTasksPerNode("2(3)", &error));
  CHECK_FALSE(ExpandTasksPerNode("", &error));
  CHECK(error == "'' is not COUNT or COUNT(xREPEAT)");
}

TEST_CASE("slurm: the leaf switch of SLURM_TOPOLOGY_ADDR is this node's segment") {
  CHECK(LeafSwitch({{"SLURM_TOPOLOGY_ADDR", "top.leaf3.gpu-001"}}) == "leaf3");
  CHECK(LeafSwitch({{"SLURM_TOPOLOGY_ADDR", "leaf3.gpu-001"}}) == "leaf3");
  CHECK(LeafSwitch({{"SLURM_TOPOLOGY_ADDR", "gpu-001"}}).empty());  // no topology/tree plugin
  CHECK(LeafSwitch({}).empty());
  CHECK(LeafSwitch({{"SLURM_TOPOLOGY_ADDR", ".gpu-001"}}).empty());         // an empty switch name
  CHECK(LeafSwitch({{"SLURM_TOPOLOGY_ADDR", "top.a,b.gpu-001"}}).empty());  // not a segment name
  EnvMap env = StepTask(1);
  env["SLURM_TOPOLOGY_ADDR"] = "s0.s1.gpu-002";
  CHECK(Facts(env).segment == "s1");
  CHECK(Facts(StepTask(1)).segment.empty());
}

}  // namespace
}  // namespace cpplaunch
