// Command line and launcher environment of the example trainer. Pure: no I/O, no getenv, no
// LibTorch, so it compiles in a second and can be checked without a process group.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cpplaunch::example {

// Raised for a bad command line or a missing/invalid launcher variable. what() is a complete,
// user-facing sentence; the trainer prints it and exits with kUsageExitCode.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kUsageExitCode = 2;

struct TrainerOptions {
  int epochs = 10;
  std::int64_t batch_size = 32;  // samples per worker per step, as DataLoader(batch_size) under DDP
  double learning_rate = 0.005;
  double momentum = 0.9;
  std::int64_t train_samples = 4096;
  std::int64_t test_samples = 1024;
  std::int64_t hidden = 32;
  std::uint64_t seed = 1234;
  std::string checkpoint;             // empty: no checkpoints, no resume
  std::chrono::seconds timeout{120};  // store connect and collective timeout
  bool help = false;
  // Test hooks. hold_at_epoch: on the first attempt only, every rank stops after that epoch's
  // checkpoint, prints its pid and sleeps (up to `timeout`) so a test can kill a worker at a
  // known point. diverge_rank: that rank perturbs its parameters before the final replica
  // check, to prove the check catches a divergence.
  std::optional<int> hold_at_epoch;
  std::optional<int> diverge_rank;
};

// Parses argv[1..]. Accepts `--name value` and `--name=value`. Throws UsageError.
TrainerOptions ParseTrainerOptions(const std::vector<std::string>& args);

// The usage text printed by --help.
std::string TrainerUsage();

// Who this worker is and where the job's store lives, as set by torchrun or cpplaunch.
struct LaunchEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string master_addr;
  std::uint16_t master_port = 0;
  int restart_count = 0;         // TORCHELASTIC_RESTART_COUNT (0 when unset)
  bool use_agent_store = false;  // TORCHELASTIC_USE_AGENT_STORE == "True"
  std::string run_id;            // TORCHELASTIC_RUN_ID, empty when unset

  // Key prefix under which the workers of this attempt meet in the agent's store, exactly as
  // torch.distributed's env:// init builds it in 1.13 ("/worker/attempt_<n>").
  std::string StorePrefix() const;
};

// Reads the launcher variables through `lookup` (returns nullptr for unset names, like getenv).
// Throws UsageError naming the missing or malformed variable and how to start the trainer.
LaunchEnv ParseLaunchEnv(const std::function<const char*(const char*)>& lookup);

}  // namespace cpplaunch::example
