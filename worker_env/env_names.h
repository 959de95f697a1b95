#pragma once
// Every environment variable name cpplaunch reads from the agent's environment or writes
// into a worker's, in one place. Values follow torchrun (torch/distributed/elastic).

#include <string_view>

namespace cpplaunch::env_names {

// Per-worker identity, exported to every worker.
inline constexpr std::string_view kLocalRank = "LOCAL_RANK";
inline constexpr std::string_view kRank = "RANK";
inline constexpr std::string_view kGroupRank = "GROUP_RANK";
inline constexpr std::string_view kRoleRank = "ROLE_RANK";
inline constexpr std::string_view kRoleName = "ROLE_NAME";
inline constexpr std::string_view kLocalWorldSize = "LOCAL_WORLD_SIZE";
inline constexpr std::string_view kWorldSize = "WORLD_SIZE";
inline constexpr std::string_view kGroupWorldSize = "GROUP_WORLD_SIZE";
inline constexpr std::string_view kRoleWorldSize = "ROLE_WORLD_SIZE";

// Where the store lives.
inline constexpr std::string_view kMasterAddr = "MASTER_ADDR";
inline constexpr std::string_view kMasterPort = "MASTER_PORT";

// Job-wide torchelastic variables.
inline constexpr std::string_view kRestartCount = "TORCHELASTIC_RESTART_COUNT";
inline constexpr std::string_view kMaxRestarts = "TORCHELASTIC_MAX_RESTARTS";
inline constexpr std::string_view kRunId = "TORCHELASTIC_RUN_ID";
inline constexpr std::string_view kUseAgentStore = "TORCHELASTIC_USE_AGENT_STORE";
inline constexpr std::string_view kErrorFile = "TORCHELASTIC_ERROR_FILE";
inline constexpr std::string_view kSignalsToHandle = "TORCHELASTIC_SIGNALS_TO_HANDLE";
// The file-timer watchdog: "1" in the agent's environment turns it on; the FIFO's path (the
// user's, else the agent's choice) reaches the workers in the second.
inline constexpr std::string_view kEnableFileTimer = "TORCHELASTIC_ENABLE_FILE_TIMER";
inline constexpr std::string_view kTimerFile = "TORCHELASTIC_TIMER_FILE";
// torchrun reads it for its health check server (a stub in open source); cpplaunch serves its
// status endpoint there (launcher/status/).
inline constexpr std::string_view kHealthCheckPort = "TORCHELASTIC_HEALTH_CHECK_PORT";

// NCCL async error handling: 1.13 reads the first name, torch >= 2.2 the second.
inline constexpr std::string_view kNcclAsyncErrorHandling = "NCCL_ASYNC_ERROR_HANDLING";
inline constexpr std::string_view kTorchNcclAsyncErrorHandling = "TORCH_NCCL_ASYNC_ERROR_HANDLING";

inline constexpr std::string_view kOmpNumThreads = "OMP_NUM_THREADS";
inline constexpr std::string_view kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";

// Read from the agent's environment only.
inline constexpr std::string_view kPythonExec = "PYTHON_EXEC";
inline constexpr std::string_view kShutdownTimeout = "TORCH_ELASTIC_SHUTDOWN_TIMEOUT";
// cpplaunch's, named as the shutdown timeout's: torchrun has no way to change its 300 s.
inline constexpr std::string_view kExitBarrierTimeout = "TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT";
// Prefix of the environment defaults for command-line options (PET_NPROC_PER_NODE, ...).
inline constexpr std::string_view kOptionEnvPrefix = "PET_";

}  // namespace cpplaunch::env_names
