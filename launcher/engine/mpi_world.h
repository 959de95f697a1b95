#pragma once
// Under an MPI launcher started with one process per node (mpirun --map-by ppr:1:node, mpiexec
// -ppn 1): what its variables say. Pure.
//
// Open MPI: OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_SIZE (OMPI_COMM_WORLD_NODE_RANK is NOT a node
// index: it counts processes on the node). MPICH's Hydra: PMI_RANK, PMI_SIZE and MPI_LOCALNRANKS
// (without MPI_LOCALNRANKS the PMI_* variables may be Slurm's pmi2 plugin's, and Slurm's own
// variables say more). A launcher that exports only PMIX_RANK (PRRTE, srun --mpi=pmix) gives the
// node rank, not the node count; it is read by ReadPmixRank, which detection tries after Slurm.
// The world size is the node count only with one process per node, so more is refused with the
// mapping flag to use. No MPI variable names rank 0's host: EngineFacts::rdzv_host stays
// nullopt (see mpi_rendezvous_host.h).

#include "launcher/engine/engine_facts.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// Open MPI or Hydra; absent when neither set of variables is complete. The run id is
// OMPI_MCA_ess_base_jobid, else PMIX_NAMESPACE, else unset; the port derives from it
// (rendezvous_port.h) when it is set.
EngineReading ReadMpiWorld(const EnvMap& env);

// PMIX_RANK alone: node rank only (nnodes 0: the user gives --nnodes). Absent without it.
EngineReading ReadPmixRank(const EnvMap& env);

}  // namespace cpplaunch
