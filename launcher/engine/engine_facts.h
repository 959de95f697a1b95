#pragma once
// What a job's engine (Slurm, an MPI launcher, Kubernetes) says about this node, and what
// reading its variables found. Pure data, filled by slurm_step, mpi_world and kubernetes_pod.

#include <optional>
#include <string>
#include <string_view>

#include "worker_env/env_map.h"

namespace cpplaunch {

enum class Engine { kNone, kSlurm, kMpi, kKubernetes };

// "none", "slurm", "mpi", "k8s": the --engine spellings.
const char* EngineName(Engine engine);

struct EngineFacts {
  Engine engine = Engine::kNone;
  std::string label;  // names the job for messages: "Slurm step 1234.0"
  int nnodes = 0;     // 0: the engine does not say (an Indexed Job, a PMIx-only launcher)
  int node_rank = 0;  // 0 <= node_rank < nnodes when nnodes is known
  std::optional<std::string> run_id;
  // The host of node rank 0, where the store is; nullopt when the engine does not say (MPI).
  std::optional<std::string> rdzv_host;
  std::optional<int> rdzv_port;  // nullopt: the engine has no port to offer
  // The part of the cluster this node sits in, for the placement of spares (segments.h); "":
  // the engine does not say.
  std::string segment;
};

// One engine's variables, read: absent (everything empty), seen but not used (`note`: one line
// for stderr), usable (`facts`), or present in a way cpplaunch cannot run under (`refusal`: one
// line naming what to do; exit 2).
struct EngineReading {
  std::optional<EngineFacts> facts;
  std::string note;
  std::string refusal;

  bool absent() const { return !facts && note.empty() && refusal.empty(); }
  // A reading that refuses to go on, saying `text` (one line).
  static EngineReading Refused(std::string text) {
    EngineReading reading;
    reading.refusal = std::move(text);
    return reading;
  }
};

// `name` as a non-negative decimal integer: nullopt when unset; nullopt with *error = "NAME='x'
// is not a non-negative integer" when set to anything else (*error is untouched otherwise).
std::optional<long long> ReadCount(const EnvMap& env, std::string_view name, std::string* error);

}  // namespace cpplaunch
