#include "launcher/engine/detect_engine.h"

#include "launcher/engine/kubernetes_pod.h"
#include "launcher/engine/mpi_world.h"
#include "launcher/engine/slurm_step.h"

namespace cpplaunch {
namespace {

EngineReading Auto(const EnvMap& env, bool endpoint_given) {
  EngineReading mpi = ReadMpiWorld(env);
  if (!mpi.absent()) return mpi;
  EngineReading slurm = ReadSlurmStep(env);
  if (slurm.facts || !slurm.refusal.empty()) return slurm;
  EngineReading pmix = ReadPmixRank(env);
  if (!pmix.absent()) return pmix;
  EngineReading pod = ReadKubernetesPod(env, endpoint_given, /*in_pod_required=*/true);
  if (!pod.absent()) return pod;
  return slurm;  // absent, or the batch script's note
}

// A named engine that is not there, or only seen, is a usage error.
EngineReading Required(EngineReading reading, const char* name, const char* missing) {
  if (reading.facts || !reading.refusal.empty()) return reading;
  reading.refusal = std::string("--engine=") + name + ": " +
                    (reading.note.empty() ? std::string(missing) : reading.note);
  reading.note.clear();
  return reading;
}

}  // namespace

std::optional<EngineChoice> ParseEngineChoice(std::string_view text) {
  if (text == "auto") return EngineChoice::kAuto;
  if (text == "none") return EngineChoice::kNone;
  if (text == "slurm") return EngineChoice::kSlurm;
  if (text == "mpi") return EngineChoice::kMpi;
  if (text == "k8s") return EngineChoice::kKubernetes;
  return std::nullopt;
}

EngineReading DetectEngine(EngineChoice choice, const EnvMap& env, bool endpoint_given) {
  switch (choice) {
    case EngineChoice::kNone:
      return {};
    case EngineChoice::kAuto:
      return Auto(env, endpoint_given);
    case EngineChoice::kSlurm:
      return Required(ReadSlurmStep(env), "slurm", "not in a Slurm job (SLURM_JOB_ID is not set)");
    case EngineChoice::kMpi: {
      EngineReading mpi = ReadMpiWorld(env);
      return Required(mpi.absent() ? ReadPmixRank(env) : mpi, "mpi",
                      "no MPI launcher variables (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE/"
                      "MPI_LOCALNRANKS or PMIX_RANK)");
    }
    case EngineChoice::kKubernetes:
      return Required(ReadKubernetesPod(env, endpoint_given, /*in_pod_required=*/false), "k8s",
                      "no LWS_* or JOB_COMPLETION_INDEX variables (PET_* variables need no "
                      "--engine: they are read as options)");
  }
  return {};
}

}  // namespace cpplaunch
