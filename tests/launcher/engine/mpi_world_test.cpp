#include "launcher/engine/mpi_world.h"

#include <catch2/catch.hpp>

#include "launcher/engine/mpi_rendezvous_host.h"
#include "launcher/engine/rendezvous_port.h"

namespace cpplaunch {
namespace {

// A process of `mpirun -np 2 --map-by ppr:1:node` (Open MPI 4.1, engines.md 4.1).
EnvMap OpenMpiProcess(int rank) {
  return {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_SIZE", "2"},
          {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},
          {"OMPI_COMM_WORLD_NODE_RANK", "0"},  // not a node index: 0 on both nodes
          {"OMPI_MCA_ess_base_jobid", "2863857665"},
          {"PMIX_RANK", std::to_string(rank)},
          {"PMIX_NAMESPACE", "prterun-vm-4242@1"}};
}

// A process of `mpiexec -ppn 1 -n 3` (MPICH 4.0 Hydra, engines.md 4.2).
EnvMap HydraProcess(int rank) {
  return {{"PMI_RANK", std::to_string(rank)},
          {"PMI_SIZE", "3"},
          {"PMI_FD", "6"},
          {"MPI_LOCALRANKID", "0"},
          {"MPI_LOCALNRANKS", "1"}};
}

TEST_CASE("Open MPI with one process per node: world size and rank are nodes") {
  EngineReading reading = ReadMpiWorld(OpenMpiProcess(1));
  REQUIRE(reading.facts);
  CHECK(reading.facts->engine == Engine::kMpi);
  CHECK(reading.facts->label == "Open MPI job");
  CHECK(reading.facts->nnodes == 2);
  CHECK(reading.facts->node_rank == 1);
  CHECK(reading.facts->run_id == "2863857665");
  CHECK(reading.facts->rdzv_port == DerivedPort(2863857665ULL, 0));
  CHECK_FALSE(reading.facts->rdzv_host);  // no variable names rank 0's host
}

TEST_CASE("MPICH Hydra with one process per node") {
  EngineReading reading = ReadMpiWorld(HydraProcess(2));
  REQUIRE(reading.facts);
  CHECK(reading.facts->label == "MPICH (Hydra) job");
  CHECK(reading.facts->nnodes == 3);
  CHECK(reading.facts->node_rank == 2);
  CHECK_FALSE(reading.facts->run_id);
  CHECK_FALSE(reading.facts->rdzv_port);  // no job id: torchrun's port stays
  // PMI_RANK/PMI_SIZE without MPI_LOCALNRANKS may be Slurm's pmi2 plugin: not Hydra.
  EnvMap pmi2 = HydraProcess(0);
  pmi2.erase("MPI_LOCALNRANKS");
  CHECK(ReadMpiWorld(pmi2).absent());
}

TEST_CASE("several processes per node are refused with the mapping to use") {
  EnvMap env = OpenMpiProcess(0);
  env["OMPI_COMM_WORLD_SIZE"] = "4";
  env["OMPI_COMM_WORLD_LOCAL_SIZE"] = "2";
  EngineReading reading = ReadMpiWorld(env);
  CHECK_FALSE(reading.facts);
  CHECK(reading.refusal ==
        "Open MPI job runs 2 processes on this node; cpplaunch starts the workers itself and "
        "needs one process per node: mpirun --map-by ppr:1:node cpplaunch --nproc-per-node=2 "
        "... (or --engine=none to ignore MPI)");
  env = HydraProcess(0);
  env["MPI_LOCALNRANKS"] = "4";
  CHECK(ReadMpiWorld(env).refusal.find("mpiexec -ppn 1 cpplaunch --nproc-per-node=4") !=
        std::string::npos);
}

TEST_CASE("inconsistent MPI variables are refused") {
  EnvMap env = OpenMpiProcess(0);
  env["OMPI_COMM_WORLD_RANK"] = "5";
  CHECK(ReadMpiWorld(env).refusal ==
        "Open MPI job: OMPI_COMM_WORLD_RANK=5 and OMPI_COMM_WORLD_SIZE=2 disagree");
  env["OMPI_COMM_WORLD_RANK"] = "-1";
  CHECK(ReadMpiWorld(env).refusal ==
        "Open MPI job: OMPI_COMM_WORLD_RANK='-1' is not a non-negative integer");
}

TEST_CASE("a PMIx rank alone gives the node rank, not the count") {
  EngineReading reading = ReadPmixRank({{"PMIX_RANK", "3"}, {"PMIX_NAMESPACE", "slurm.pmix.9.0"}});
  REQUIRE(reading.facts);
  CHECK(reading.facts->label == "PMIx job");
  CHECK(reading.facts->node_rank == 3);
  CHECK(reading.facts->nnodes == 0);
  CHECK(reading.facts->run_id == "slurm.pmix.9.0");
  CHECK(ReadPmixRank({}).absent());
  CHECK(ReadMpiWorld({{"PMIX_RANK", "3"}}).absent());
}

TEST_CASE("MPI without an endpoint: one line naming the flags to add") {
  EngineReading reading = ReadMpiWorld(OpenMpiProcess(1));
  std::string error;
  CHECK_FALSE(FindMpiRendezvousHost(OpenMpiProcess(1), *reading.facts, &error));
  CHECK(error.find("Open MPI job: no MPI variable names rank 0's host; add --master-addr=HOST") ==
        0);
  CHECK(error.find("--rdzv-endpoint=HOST:PORT") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
