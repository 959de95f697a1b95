#pragma once
// Inside an srun step: what the step's variables say (srun(1), "OUTPUT ENVIRONMENT VARIABLES").
// Pure.
//
// A step is SLURM_JOB_ID + SLURM_STEP_ID (or the older SLURM_STEPID) + SLURM_STEP_NODELIST. The
// batch script itself has SLURM_JOB_ID and even SLURM_NODEID=0 but none of the step variables:
// there nothing is detected (trusting SLURM_NNODES would wait for nodes never started), and the
// reading's note says so. Inside a step the node variables are step-relative, so the store's
// host is the first host of SLURM_STEP_NODELIST (whose node id is 0), never of the job's list.
//
// One agent per node: a step running more than one task on this node (srun -n8 -N2, the
// srun-per-GPU style) is refused with the srun command to use instead. cpplaunch starts and
// supervises the workers itself; a per-task shim would give up that supervision (restarts,
// gang teardown, one store per job), so the one-line refusal is the honest answer.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/engine/engine_facts.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// Facts: nnodes = SLURM_STEP_NUM_NODES (else SLURM_NNODES), node rank = SLURM_NODEID, run id
// "<job>.<step>", store host = first host of SLURM_STEP_NODELIST, port = DerivedPort(job, step).
// Absent without SLURM_JOB_ID.
EngineReading ReadSlurmStep(const EnvMap& env);

// The leaf switch this node hangs off, from SLURM_TOPOLOGY_ADDR ("top.leaf3.node12" -> "leaf3"),
// which Slurm sets only under its topology/tree plugin; "" when unset, without a switch, or not
// a segment name (segments.h). Spares of a lost node's leaf switch take its slot first.
std::string LeafSwitch(const EnvMap& env);

// "2(x3),1" (SLURM_STEP_TASKS_PER_NODE) as one count per node: 2,2,2,1. nullopt with *error
// for a malformed list.
std::optional<std::vector<int>> ExpandTasksPerNode(std::string_view text, std::string* error);

}  // namespace cpplaunch
