#include "launcher/engine/detect_engine.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

const EnvMap kSlurmStep{{"SLURM_JOB_ID", "55"},
                        {"SLURM_STEP_ID", "0"},
                        {"SLURM_NODEID", "1"},
                        {"SLURM_STEP_NUM_NODES", "2"},
                        {"SLURM_STEP_NODELIST", "n[1-2]"},
                        {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"}};

EnvMap With(EnvMap env, const EnvMap& more) {
  env.insert(more.begin(), more.end());
  return env;
}

TEST_CASE("--engine spellings") {
  CHECK(ParseEngineChoice("auto") == EngineChoice::kAuto);
  CHECK(ParseEngineChoice("none") == EngineChoice::kNone);
  CHECK(ParseEngineChoice("slurm") == EngineChoice::kSlurm);
  CHECK(ParseEngineChoice("mpi") == EngineChoice::kMpi);
  CHECK(ParseEngineChoice("k8s") == EngineChoice::kKubernetes);
  CHECK_FALSE(ParseEngineChoice("Slurm"));
  CHECK_FALSE(ParseEngineChoice(""));
}

TEST_CASE("auto: nothing in a plain environment") {
  CHECK(DetectEngine(EngineChoice::kAuto, {{"HOME", "/root"}}, false).absent());
}

TEST_CASE("auto: MPI's variables win over Slurm's (mpirun inside sbatch)") {
  // mpirun --map-by ppr:1:node inside sbatch -N2: orted was started by srun, so the process
  // also sees a step (engines.md 4.3), here with node ids that do not match the MPI ranks.
  const EnvMap env = With(kSlurmStep, {{"OMPI_COMM_WORLD_RANK", "0"},
                                       {"OMPI_COMM_WORLD_SIZE", "2"},
                                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}});
  EngineReading reading = DetectEngine(EngineChoice::kAuto, env, false);
  REQUIRE(reading.facts);
  CHECK(reading.facts->engine == Engine::kMpi);
  CHECK(reading.facts->node_rank == 0);
  // --engine=slurm still reads the step.
  reading = DetectEngine(EngineChoice::kSlurm, env, false);
  REQUIRE(reading.facts);
  CHECK(reading.facts->engine == Engine::kSlurm);
  CHECK(reading.facts->node_rank == 1);
}

TEST_CASE("auto: a bare PMIx rank says less than the Slurm step it runs in") {
  const EnvMap env = With(kSlurmStep, {{"PMIX_RANK", "1"}});
  EngineReading reading = DetectEngine(EngineChoice::kAuto, env, false);
  REQUIRE(reading.facts);
  CHECK(reading.facts->engine == Engine::kSlurm);
  reading = DetectEngine(EngineChoice::kAuto, {{"PMIX_RANK", "1"}}, false);
  REQUIRE(reading.facts);
  CHECK(reading.facts->label == "PMIx job");
}

TEST_CASE("auto: Slurm before Kubernetes; the batch script's note when nothing else") {
  const EnvMap pod{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                   {"LWS_LEADER_ADDRESS", "lead"},
                   {"LWS_GROUP_SIZE", "2"},
                   {"LWS_WORKER_INDEX", "1"}};
  CHECK(DetectEngine(EngineChoice::kAuto, With(kSlurmStep, pod), false).facts->engine ==
        Engine::kSlurm);
  const EnvMap batch{{"SLURM_JOB_ID", "55"}, {"SLURM_NNODES", "2"}};
  CHECK(DetectEngine(EngineChoice::kAuto, With(batch, pod), false).facts->engine ==
        Engine::kKubernetes);
  EngineReading reading = DetectEngine(EngineChoice::kAuto, batch, false);
  CHECK_FALSE(reading.facts);
  CHECK(reading.note.starts_with("Slurm job 55, but not inside an srun step"));
}

TEST_CASE("none ignores every engine") {
  CHECK(DetectEngine(EngineChoice::kNone, kSlurmStep, false).absent());
}

TEST_CASE("a named engine that is not there is a refusal naming --engine") {
  CHECK(DetectEngine(EngineChoice::kSlurm, {}, false).refusal ==
        "--engine=slurm: not in a Slurm job (SLURM_JOB_ID is not set)");
  CHECK(DetectEngine(EngineChoice::kSlurm, {{"SLURM_JOB_ID", "55"}}, false)
            .refusal.starts_with("--engine=slurm: Slurm job 55, but not inside an srun step"));
  CHECK(DetectEngine(EngineChoice::kMpi, kSlurmStep, false)
            .refusal.starts_with("--engine=mpi: no MPI launcher variables"));
  CHECK(DetectEngine(EngineChoice::kKubernetes, {}, false)
            .refusal.starts_with("--engine=k8s: no LWS_* or JOB_COMPLETION_INDEX variables"));
  CHECK(DetectEngine(EngineChoice::kKubernetes, {{"JOB_COMPLETION_INDEX", "1"}}, false)
            .refusal.starts_with("--engine=k8s: Indexed Job pod 1: not used without"));
}

}  // namespace
}  // namespace cpplaunch
