#pragma once
// Which engine this process runs under, by --engine: auto tries the innermost launcher first,
// MPI (Open MPI, Hydra) > Slurm step > PMIx rank alone > Kubernetes conventions. mpirun inside
// an sbatch job starts its daemons with srun, so both sets of variables are present there and
// MPI's describe this process; a bare PMIx rank (srun --mpi=pmix) says less than the step.
// Pure.

#include <optional>
#include <string_view>

#include "launcher/engine/engine_facts.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

enum class EngineChoice { kAuto, kNone, kSlurm, kMpi, kKubernetes };

// "auto", "none", "slurm", "mpi", "k8s"; nullopt for anything else.
std::optional<EngineChoice> ParseEngineChoice(std::string_view text);

// Absent for none (and for auto when nothing is found). A named engine must be there: its
// absence, or a note (seen, not usable), becomes a refusal naming --engine.
// `endpoint_given`: --master-addr or --rdzv-endpoint (or their PET_ variables) is set.
EngineReading DetectEngine(EngineChoice choice, const EnvMap& env, bool endpoint_given);

}  // namespace cpplaunch
