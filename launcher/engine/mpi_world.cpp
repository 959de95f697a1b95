#include "launcher/engine/mpi_world.h"

#include "launcher/engine/rendezvous_port.h"

namespace cpplaunch {
namespace {

// One launcher's variable names.
struct Dialect {
  const char* name;  // for the label
  const char* rank;
  const char* size;
  const char* local_size;
  const char* one_per_node;  // the launcher's flag for one process per node
};

constexpr Dialect kOpenMpi{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                           "OMPI_COMM_WORLD_LOCAL_SIZE", "mpirun --map-by ppr:1:node"};
constexpr Dialect kHydra{"MPICH (Hydra)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS",
                         "mpiexec -ppn 1"};

std::optional<std::string> RunId(const EnvMap& env) {
  if (auto id = Lookup(env, "OMPI_MCA_ess_base_jobid")) return id;
  return Lookup(env, "PMIX_NAMESPACE");
}

EngineReading Read(const EnvMap& env, const Dialect& dialect) {
  std::string error;
  auto rank = ReadCount(env, dialect.rank, &error);
  auto size = ReadCount(env, dialect.size, &error);
  auto local_size = ReadCount(env, dialect.local_size, &error);
  const std::string label = std::string(dialect.name) + " job";
  if (!error.empty()) return EngineReading::Refused(label + ": " + error);
  if (*size < 1 || *rank >= *size) {
    return EngineReading::Refused(label + ": " + dialect.rank + "=" + std::to_string(*rank) +
                                  " and " + dialect.size + "=" + std::to_string(*size) +
                                  " disagree");
  }
  if (local_size && *local_size > 1) {
    return EngineReading::Refused(
        label + " runs " + std::to_string(*local_size) +
        " processes on this node; cpplaunch starts the workers itself and needs one "
        "process per node: " +
        dialect.one_per_node + " cpplaunch --nproc-per-node=" + std::to_string(*local_size) +
        " ... (or --engine=none to ignore MPI)");
  }
  EngineFacts facts;
  facts.engine = Engine::kMpi;
  facts.label = label;
  facts.nnodes = static_cast<int>(*size);
  facts.node_rank = static_cast<int>(*rank);
  facts.run_id = RunId(env);
  if (facts.run_id) facts.rdzv_port = DerivedPort(JobNumber(*facts.run_id), 0);
  EngineReading reading;
  reading.facts = std::move(facts);
  return reading;
}

bool Has(const EnvMap& env, const Dialect& dialect, bool need_local_size) {
  return Lookup(env, dialect.rank) && Lookup(env, dialect.size) &&
         (!need_local_size || Lookup(env, dialect.local_size));
}

}  // namespace

EngineReading ReadMpiWorld(const EnvMap& env) {
  if (Has(env, kOpenMpi, false)) return Read(env, kOpenMpi);
  if (Has(env, kHydra, true)) return Read(env, kHydra);
  return {};
}

EngineReading ReadPmixRank(const EnvMap& env) {
  std::string error;
  auto rank = ReadCount(env, "PMIX_RANK", &error);
  if (!error.empty()) return EngineReading::Refused("PMIx job: " + error);
  if (!rank) return {};
  EngineFacts facts;
  facts.engine = Engine::kMpi;
  facts.label = "PMIx job";
  facts.node_rank = static_cast<int>(*rank);
  facts.run_id = Lookup(env, "PMIX_NAMESPACE");
  if (facts.run_id) facts.rdzv_port = DerivedPort(JobNumber(*facts.run_id), 0);
  EngineReading reading;
  reading.facts = std::move(facts);
  return reading;
}

}  // namespace cpplaunch
