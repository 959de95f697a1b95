#include "examples/trainer_options.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>

namespace cpplaunch::example {
namespace {

constexpr const char* kHowToLaunch =
    "trainer is a distributed worker: start it through a launcher, for example\n"
    "  cpplaunch --nproc-per-node=2 ./trainer\n"
    "  torchrun --nproc_per_node=2 --no_python ./trainer";

std::int64_t ParseInteger(const std::string& what, const std::string& text, std::int64_t min,
                          std::int64_t max) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(what + " must be an integer, got '" + text + "'");
  }
  if (value < min || value > max) {
    throw UsageError(what + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + text);
  }
  return value;
}

double ParsePositiveReal(const std::string& what, const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(value) || value < 0) {
    throw UsageError(what + " must be a non-negative number, got '" + text + "'");
  }
  return value;
}

using Setter = std::function<void(TrainerOptions&, const std::string&)>;

const std::map<std::string, Setter>& ValueOptions() {
  constexpr std::int64_t kBig = std::int64_t{1} << 40;
  static const std::map<std::string, Setter> options = {
      {"--epochs",
       [](TrainerOptions& o, const std::string& v) {
         o.epochs = static_cast<int>(ParseInteger("--epochs", v, 1, 1000000));
       }},
      {"--batch-size",
       [](TrainerOptions& o, const std::string& v) {
         o.batch_size = ParseInteger("--batch-size", v, 1, kBig);
       }},
      {"--lr", [](TrainerOptions& o,
                  const std::string& v) { o.learning_rate = ParsePositiveReal("--lr", v); }},
      {"--momentum",
       [](TrainerOptions& o, const std::string& v) {
         o.momentum = ParsePositiveReal("--momentum", v);
         if (o.momentum >= 1) throw UsageError("--momentum must be below 1, got " + v);
       }},
      {"--samples",
       [](TrainerOptions& o, const std::string& v) {
         o.train_samples = ParseInteger("--samples", v, 1, kBig);
       }},
      {"--test-samples",
       [](TrainerOptions& o, const std::string& v) {
         o.test_samples = ParseInteger("--test-samples", v, 1, kBig);
       }},
      {"--hidden", [](TrainerOptions& o,
                      const std::string& v) { o.hidden = ParseInteger("--hidden", v, 1, 65536); }},
      {"--seed",
       [](TrainerOptions& o, const std::string& v) {
         o.seed = static_cast<std::uint64_t>(
             ParseInteger("--seed", v, 0, std::numeric_limits<std::int64_t>::max()));
       }},
      {"--checkpoint",
       [](TrainerOptions& o, const std::string& v) {
         if (v.empty()) throw UsageError("--checkpoint needs a file path");
         o.checkpoint = v;
       }},
      {"--timeout",
       [](TrainerOptions& o, const std::string& v) {
         o.timeout = std::chrono::seconds(ParseInteger("--timeout", v, 1, 86400));
       }},
      {"--hold-at-epoch",
       [](TrainerOptions& o, const std::string& v) {
         o.hold_at_epoch = static_cast<int>(ParseInteger("--hold-at-epoch", v, 1, 1000000));
       }},
      {"--diverge-rank",
       [](TrainerOptions& o, const std::string& v) {
         o.diverge_rank = static_cast<int>(ParseInteger("--diverge-rank", v, 0, 1 << 24));
       }},
  };
  return options;
}

}  // namespace

TrainerOptions ParseTrainerOptions(const std::vector<std::string>& args) {
  TrainerOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      continue;
    }
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    auto it = ValueOptions().find(name);
    if (it == ValueOptions().end()) {
      throw UsageError("unknown option '" + arg + "' (see --help)");
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw UsageError(name + " needs a value");
    }
    it->second(options, value);
  }
  if (options.epochs < 1) throw UsageError("--epochs must be at least 1");
  return options;
}

std::string TrainerUsage() {
  return "usage: trainer [options]   (run under cpplaunch or torchrun)\n"
         "\n"
         "Trains a small MLP data-parallel on a synthetic two-cluster classification task\n"
         "(10 features, 2 classes) with c10d::ProcessGroupGloo, meeting the other workers\n"
         "through the launcher's TCPStore.\n"
         "\n"
         "options:\n"
         "  --epochs N          epochs to train (default 10)\n"
         "  --batch-size N      samples per worker per step (default 32)\n"
         "  --lr X              SGD learning rate (default 0.005)\n"
         "  --momentum X        SGD momentum (default 0.9)\n"
         "  --samples N         training samples in the whole data set (default 4096)\n"
         "  --test-samples N    held-out samples for the accuracy (default 1024)\n"
         "  --hidden N          width of the two hidden layers (default 32)\n"
         "  --seed N            seed of data, shuffling and initial weights (default 1234)\n"
         "  --checkpoint PATH   rank 0 saves model and optimizer there after every epoch;\n"
         "                      every rank resumes from it when it exists (default: none)\n"
         "  --timeout SECONDS   store connect and collective timeout (default 120)\n"
         "  -h, --help          this text\n"
         "\n"
         "test hooks:\n"
         "  --hold-at-epoch E   first attempt only: after epoch E (and its checkpoint) every\n"
         "                      rank prints its pid and waits up to --timeout to be killed\n"
         "  --diverge-rank R    rank R perturbs its weights before the final replica check\n"
         "\n"
         "environment (set by the launcher): RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,\n"
         "MASTER_PORT, TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_USE_AGENT_STORE.\n"
         "exit codes: 0 trained and replicas identical, 1 runtime error, 2 usage or\n"
         "environment error, 3 replicas differ.\n";
}

std::string LaunchEnv::StorePrefix() const {
  return "/worker/attempt_" + std::to_string(restart_count);
}

LaunchEnv ParseLaunchEnv(const std::function<const char*(const char*)>& lookup) {
  auto required = [&](const char* name) -> std::string {
    const char* value = lookup(name);
    if (value == nullptr || *value == '\0') {
      throw UsageError(std::string(name) + " is not set.\n" + kHowToLaunch);
    }
    return value;
  };
  auto integer = [&](const char* name, std::int64_t min, std::int64_t max) {
    return ParseInteger(std::string("environment variable ") + name, required(name), min, max);
  };
  LaunchEnv env;
  env.world_size = static_cast<int>(integer("WORLD_SIZE", 1, 1 << 24));
  env.rank = static_cast<int>(integer("RANK", 0, env.world_size - 1));
  env.local_rank = static_cast<int>(integer("LOCAL_RANK", 0, env.world_size - 1));
  env.master_addr = required("MASTER_ADDR");
  env.master_port = static_cast<std::uint16_t>(integer("MASTER_PORT", 1, 65535));
  const char* agent_store = lookup("TORCHELASTIC_USE_AGENT_STORE");
  env.use_agent_store = agent_store != nullptr && std::string(agent_store) == "True";
  // The attempt number names the store prefix, so with the agent's store it is mandatory (as in
  // torch.distributed); a stale attempt_0 namespace would otherwise be reused after a restart.
  const char* restarts = lookup("TORCHELASTIC_RESTART_COUNT");
  if (env.use_agent_store || (restarts != nullptr && *restarts != '\0')) {
    env.restart_count = static_cast<int>(integer("TORCHELASTIC_RESTART_COUNT", 0, 1 << 30));
  }
  if (const char* run_id = lookup("TORCHELASTIC_RUN_ID")) env.run_id = run_id;
  return env;
}

}  // namespace cpplaunch::example
