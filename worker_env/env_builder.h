#pragma once
// One worker's complete environment, exactly as torchrun builds it: the agent's
// environment overlaid by torchrun's per-worker variables. Pure: the agent's environment
// comes in as a value, nothing is read from the process.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "worker_env/env_map.h"
#include "worker_env/rank_layout.h"

namespace cpplaunch {

// What every worker of one attempt shares.
struct JobInfo {
  std::string role = "default";  // ROLE_NAME
  std::string master_addr;       // MASTER_ADDR
  int master_port = 0;           // MASTER_PORT
  int restart_count = 0;         // TORCHELASTIC_RESTART_COUNT
  int max_restarts = 0;          // TORCHELASTIC_MAX_RESTARTS
  std::string run_id = "none";   // TORCHELASTIC_RUN_ID
  bool use_agent_store = true;   // TORCHELASTIC_USE_AGENT_STORE ("True"/"False")
  // TORCHELASTIC_ERROR_FILE of a local rank: <attempt dir>/<local_rank>/error.json, or ""
  // when logging is disabled (--log-dir /dev/null). Must be set.
  std::function<std::string(int local_rank)> error_file_for;
  // TORCHELASTIC_SIGNALS_TO_HANDLE, the --signals-to-handle text as given. Newest torchrun
  // puts it into its own environment before starting workers, so workers inherit it.
  std::string signals_to_handle = "SIGTERM,SIGINT,SIGHUP,SIGQUIT";
  // --virtual-local-rank: LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES narrowed to one device.
  bool virtual_local_rank = false;
};

struct WorkerEnv {
  std::vector<std::string> entries;  // "NAME=value", sorted by name, ready for execve
  // True when OMP_NUM_THREADS=1 was added (see OmpThreadsDefaulted).
  bool omp_num_threads_defaulted = false;
};

// torchrun sets OMP_NUM_THREADS=1 for all workers when the agent's environment lacks it
// and more than one worker runs on this node. (torchrun prints a 5-line banner; the agent
// should print one short line once per job.)
bool OmpThreadsDefaulted(const EnvMap& agent_env, int local_world_size);
// When OmpThreadsDefaulted: sets OMP_NUM_THREADS=1 in the agent's environment (as torchrun sets
// os.environ, so every attempt's workers inherit it) and returns the one line that says so.
std::optional<std::string> DefaultOmpThreads(EnvMap& agent_env, int local_world_size);

// --virtual-local-rank: the CUDA_VISIBLE_DEVICES value of a worker. With the parent's
// variable set, its local_rank-th comma-separated entry (whitespace stripped); unset, the
// local rank itself. Returns nullopt and fills *error when local_rank is past the end of
// the parent's list (torchrun: ValueError, exit 1).
std::optional<std::string> VirtualVisibleDevice(const std::optional<std::string>& parent_value,
                                                int local_rank, std::string* error);

// The environment of worker `who`. NCCL_ASYNC_ERROR_HANDLING and
// TORCH_NCCL_ASYNC_ERROR_HANDLING each keep the agent's value, else "1". Fails only for
// --virtual-local-rank with too short a CUDA_VISIBLE_DEVICES (see VirtualVisibleDevice).
std::optional<WorkerEnv> BuildWorkerEnv(const EnvMap& agent_env, const JobInfo& job,
                                        const WorkerIdentity& who, std::string* error);

}  // namespace cpplaunch
