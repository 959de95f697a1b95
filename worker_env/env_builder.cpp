#include "worker_env/env_builder.h"

#include <utility>

#include "base/text.h"
#include "worker_env/env_names.h"

namespace cpplaunch {
namespace {

void Put(EnvMap& env, std::string_view name, std::string value) {
  env.insert_or_assign(std::string(name), std::move(value));
}

// insert_or_assign: torchrun's variables override whatever the agent's environment holds
// under the same name (a stale RANK from an outer launcher must not leak into a worker).
void PutIdentity(EnvMap& env, const WorkerIdentity& who) {
  using namespace env_names;
  Put(env, kLocalRank, std::to_string(who.local_rank));
  Put(env, kRank, std::to_string(who.rank));
  Put(env, kGroupRank, std::to_string(who.group_rank));
  Put(env, kRoleRank, std::to_string(who.role_rank));
  Put(env, kLocalWorldSize, std::to_string(who.local_world_size));
  Put(env, kWorldSize, std::to_string(who.world_size));
  Put(env, kGroupWorldSize, std::to_string(who.group_world_size));
  Put(env, kRoleWorldSize, std::to_string(who.role_world_size));
}

void PutJob(EnvMap& env, const JobInfo& job, int local_rank) {
  using namespace env_names;
  Put(env, kRoleName, job.role);
  Put(env, kMasterAddr, job.master_addr);
  Put(env, kMasterPort, std::to_string(job.master_port));
  Put(env, kRestartCount, std::to_string(job.restart_count));
  Put(env, kMaxRestarts, std::to_string(job.max_restarts));
  Put(env, kRunId, job.run_id);
  // Python's str(bool): torch's env:// init treats the agent store as in use only when the
  // value is exactly the text "True" (docs: tcpstore-protocol.md, worker side).
  Put(env, kUseAgentStore, job.use_agent_store ? "True" : "False");
  Put(env, kErrorFile, job.error_file_for(local_rank));
  Put(env, kSignalsToHandle, job.signals_to_handle);
}

// Keeps the agent's value (already inherited) or defaults it to "1". Both spellings are
// written because one binary serves torch 1.13 (NCCL_...) and torch >= 2.2 (TORCH_NCCL_...).
void DefaultToOne(EnvMap& env, std::string_view name) {
  if (!Lookup(env, name)) Put(env, name, "1");
}

std::vector<std::string> ToEntries(const EnvMap& env) {
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [name, value] : env) {
    std::string entry;
    entry.reserve(name.size() + 1 + value.size());
    entry.append(name).append(1, '=').append(value);
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace

bool OmpThreadsDefaulted(const EnvMap& agent_env, int local_world_size) {
  return local_world_size > 1 && !Lookup(agent_env, env_names::kOmpNumThreads);
}

std::optional<std::string> DefaultOmpThreads(EnvMap& agent_env, int local_world_size) {
  if (!OmpThreadsDefaulted(agent_env, local_world_size)) return std::nullopt;
  agent_env[std::string(env_names::kOmpNumThreads)] = "1";
  // torchrun prints a five-line banner; one line says the same.
  return "OMP_NUM_THREADS is not set; setting it to 1 for each of the " +
         std::to_string(local_world_size) + " workers (set it to tune)";
}

std::optional<std::string> VirtualVisibleDevice(const std::optional<std::string>& parent_value,
                                                int local_rank, std::string* error) {
  if (!parent_value) return std::to_string(local_rank);
  const std::vector<std::string_view> devices = Split(*parent_value, ',');
  if (local_rank < 0 || local_rank >= static_cast<int>(devices.size())) {
    *error = "local_rank " + std::to_string(local_rank) + " exceeds available GPUs in " +
             std::string(env_names::kCudaVisibleDevices) + "=" + *parent_value;
    return std::nullopt;
  }
  return std::string(Strip(devices[local_rank]));
}

std::optional<WorkerEnv> BuildWorkerEnv(const EnvMap& agent_env, const JobInfo& job,
                                        const WorkerIdentity& who, std::string* error) {
  // Workers inherit the agent's whole environment, as torchrun's do; nothing beyond torchrun's
  // own variables is added, since some libraries detect torchrun by the exact set.
  EnvMap env = agent_env;
  PutIdentity(env, who);
  PutJob(env, job, who.local_rank);
  DefaultToOne(env, env_names::kNcclAsyncErrorHandling);
  DefaultToOne(env, env_names::kTorchNcclAsyncErrorHandling);
  WorkerEnv out;
  out.omp_num_threads_defaulted = OmpThreadsDefaulted(agent_env, who.local_world_size);
  if (out.omp_num_threads_defaulted) Put(env, env_names::kOmpNumThreads, "1");
  if (job.virtual_local_rank) {
    auto device = VirtualVisibleDevice(Lookup(agent_env, env_names::kCudaVisibleDevices),
                                       who.local_rank, error);
    if (!device) return std::nullopt;
    // Applied after PutIdentity so the rewrite wins; the device is chosen by the real local
    // rank, which is why `who` keeps it (see WorkerIdentity::local_rank).
    Put(env, env_names::kLocalRank, "0");
    Put(env, env_names::kCudaVisibleDevices, *device);
  }
  out.entries = ToEntries(env);
  return out;
}

}  // namespace cpplaunch
