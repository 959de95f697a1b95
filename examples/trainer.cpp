// Example: a data-parallel training job in C++ (LibTorch 1.13), launched by cpplaunch or torchrun.
//
//   cpplaunch --nproc-per-node=4 ./trainer --epochs=10 --checkpoint=/tmp/ckpt.pt
//
// Every worker reads its identity from the launcher's environment, connects to the launcher's
// TCPStore with LibTorch's own c10d::TCPStore client (keys under /worker/attempt_<n>, as
// torch.distributed does), builds a c10d::ProcessGroupGloo on it and trains a small MLP on a
// synthetic two-cluster task. Gradients are all-reduced and averaged each step (what DDP does),
// so all replicas stay identical; the program checks that at the end. This is the only file of
// the trainer that includes LibTorch (a translation unit with <torch/torch.h> compiles slowly).
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "examples/distributed_shard.h"
#include "examples/trainer_options.h"

namespace cpplaunch::example {
namespace {

constexpr int kReplicaMismatchExitCode = 3;
constexpr std::int64_t kFeatures = 10;
constexpr std::int64_t kClasses = 2;
// Distance of each cluster centre from the origin, in noise standard deviations. The best
// possible accuracy is Phi(1.6), about 94.5%, so the task is learnable but not trivial.
constexpr double kCentreDistance = 1.6;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One line to stdout, flushed at once: under a launcher stdout is a pipe or a file, and a
// worker that is killed must not take its last lines with it.
__attribute__((format(printf, 1, 2))) void Say(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

struct Dataset {
  torch::Tensor features;  // [n, kFeatures] float
  torch::Tensor labels;    // [n] long, 0 or 1
};

// Two Gaussian clusters (unit variance) at +centre and -centre; the label says which.
Dataset MakeTwoClusters(const torch::Tensor& centre, std::int64_t samples, std::uint64_t seed) {
  auto generator = at::detail::createCPUGenerator(seed);
  Dataset data;
  data.labels = torch::randint(0, kClasses, {samples}, generator, torch::kLong);
  auto side = data.labels.to(torch::kFloat).mul(2).sub(1).unsqueeze(1);
  data.features = torch::randn({samples, kFeatures}, generator, torch::kFloat) + side * centre;
  return data;
}

torch::Tensor MakeCentre(std::uint64_t seed) {
  auto generator = at::detail::createCPUGenerator(seed);
  auto centre = torch::randn({kFeatures}, generator, torch::kFloat);
  return centre / centre.norm() * kCentreDistance;
}

torch::nn::Sequential MakeModel(std::int64_t hidden) {
  return torch::nn::Sequential(torch::nn::Linear(kFeatures, hidden), torch::nn::ReLU(),
                               torch::nn::Linear(hidden, hidden), torch::nn::ReLU(),
                               torch::nn::Linear(hidden, kClasses));
}

torch::Tensor Flatten(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> flat;
  for (const auto& t : tensors) flat.push_back(t.reshape({-1}));
  return torch::cat(flat);
}

void Unflatten(const torch::Tensor& flat, std::vector<torch::Tensor>& tensors) {
  std::int64_t offset = 0;
  for (auto& t : tensors) {
    t.copy_(flat.slice(0, offset, offset + t.numel()).view_as(t));
    offset += t.numel();
  }
}

bool IsLoopback(const std::string& host) {
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "::1";
}

// The gloo transport address of this worker. GLOO_SOCKET_IFNAME wins, as in torch.distributed;
// a single-host job (MASTER_ADDR on loopback) stays on loopback, so it works without DNS;
// otherwise gloo binds the address this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> MakeGlooDevice(const LaunchEnv& env) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  }
  if (IsLoopback(env.master_addr)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// The workers of one job: the store they met in and the gloo process group built on it.
class Cluster {
 public:
  Cluster(const LaunchEnv& env, std::chrono::milliseconds timeout) : env_(env) {
    store_ = ConnectStore(timeout);
    auto group_store = c10::make_intrusive<c10d::PrefixStore>("default_pg", store_);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(MakeGlooDevice(env_));
    group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(group_store, env_.rank, env_.world_size,
                                                         options);
    StoreBarrier(*group_store, timeout);
  }

  const LaunchEnv& env() const { return env_; }
  bool leader() const { return env_.rank == 0; }

  void AllReduce(torch::Tensor& tensor, c10d::ReduceOp op = c10d::ReduceOp::SUM) {
    std::vector<torch::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = op;
    group_->allreduce(tensors, options)->wait();
  }

  void Broadcast(torch::Tensor& tensor) {
    std::vector<torch::Tensor> tensors{tensor};
    group_->broadcast(tensors)->wait();
  }

 private:
  // As torch.distributed's env:// init: with the launcher's store every rank is a client under
  // the attempt's prefix; otherwise rank 0 hosts the store itself.
  c10::intrusive_ptr<c10d::Store> ConnectStore(std::chrono::milliseconds timeout) {
    c10d::TCPStoreOptions options;
    options.port = env_.master_port;
    options.isServer = !env_.use_agent_store && env_.rank == 0;
    options.numWorkers = static_cast<std::size_t>(env_.world_size);
    options.waitWorkers = true;  // every rank ADDs init/, as the Python workers do
    options.timeout = timeout;
    options.multiTenant = true;
    c10::intrusive_ptr<c10d::Store> store =
        c10::make_intrusive<c10d::TCPStore>(env_.master_addr, options);
    if (env_.use_agent_store) {
      store = c10::make_intrusive<c10d::PrefixStore>(env_.StorePrefix(), store);
    }
    return store;
  }

  // torch.distributed's store-based barrier after creating a process group: count arrivals in
  // one key and poll it. It proves every rank reached the store before training starts.
  void StoreBarrier(c10d::Store& store, std::chrono::milliseconds timeout) {
    const std::string key = "store_based_barrier_key:1";
    store.add(key, 1);
    const auto deadline = Clock::now() + timeout;
    while (store.add(key, 0) < env_.world_size) {
      if (Clock::now() > deadline) {
        throw std::runtime_error("timed out waiting for all " + std::to_string(env_.world_size) +
                                 " workers at the store barrier");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  LaunchEnv env_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

// Checkpoint file: completed epochs, model and optimizer state. Written to a temporary name and
// renamed, so a worker killed while saving never leaves a torn checkpoint behind.
void SaveCheckpoint(const std::string& path, int completed_epochs, torch::nn::Sequential& model,
                    torch::optim::SGD& optimizer) {
  torch::serialize::OutputArchive archive;
  archive.write("completed_epochs", torch::tensor(static_cast<std::int64_t>(completed_epochs)));
  torch::serialize::OutputArchive model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  archive.save_to(temporary);
  std::filesystem::rename(temporary, path);
}

int LoadCheckpoint(const std::string& path, torch::nn::Sequential& model,
                   torch::optim::SGD& optimizer) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  torch::Tensor completed;
  archive.read("completed_epochs", completed);
  torch::serialize::InputArchive model_archive;
  archive.read("model", model_archive);
  model->load(model_archive);
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  return static_cast<int>(completed.item<std::int64_t>());
}

// Rank 0 decides whether to resume (so all ranks agree), then every rank loads the file itself.
// Returns the number of completed epochs (0 for a fresh start).
int Resume(Cluster& cluster, const TrainerOptions& options, torch::nn::Sequential& model,
           torch::optim::SGD& optimizer) {
  if (options.checkpoint.empty()) return 0;
  torch::Tensor decided = torch::zeros({1}, torch::kLong);
  if (cluster.leader() && std::filesystem::exists(options.checkpoint)) {
    decided[0] = LoadCheckpoint(options.checkpoint, model, optimizer);
  }
  cluster.Broadcast(decided);
  const int completed = static_cast<int>(decided[0].item<std::int64_t>());
  if (completed == 0 || cluster.leader()) return completed;
  if (!std::filesystem::exists(options.checkpoint) ||
      LoadCheckpoint(options.checkpoint, model, optimizer) != completed) {
    throw std::runtime_error("rank 0 resumes from " + options.checkpoint + " after epoch " +
                             std::to_string(completed) +
                             " but this rank does not see that checkpoint; the checkpoint path "
                             "must be on storage that every worker shares");
  }
  return completed;
}

// What DDP does after backward: sum every gradient across ranks (one coalesced all-reduce)
// and divide by the number of ranks.
void AverageGradients(Cluster& cluster, torch::nn::Sequential& model) {
  std::vector<torch::Tensor> grads;
  for (auto& p : model->parameters()) grads.push_back(p.grad());
  torch::Tensor flat = Flatten(grads);
  cluster.AllReduce(flat);
  flat.div_(cluster.env().world_size);
  Unflatten(flat, grads);
}

// Every replica starts from rank 0's weights, as DistributedDataParallel's constructor ensures.
void BroadcastParameters(Cluster& cluster, torch::nn::Sequential& model) {
  torch::NoGradGuard no_grad;
  auto params = model->parameters();
  torch::Tensor flat = Flatten(params);
  cluster.Broadcast(flat);
  Unflatten(flat, params);
}

struct EpochStats {
  double loss = 0;
  double train_accuracy = 0;
  double test_accuracy = 0;
};

struct Trainer {
  Cluster& cluster;
  const TrainerOptions& options;
  Dataset train;
  Dataset test;
  torch::nn::Sequential model;
  torch::optim::SGD optimizer;

  EpochStats RunEpoch(int epoch) {
    ShardSpec spec{options.train_samples, cluster.env().world_size, cluster.env().rank, true,
                   options.seed};
    torch::Tensor shard = torch::tensor(ShardIndices(spec, epoch), torch::kLong);
    // Loss sum, correct predictions, samples: summed over ranks at the end of the epoch.
    torch::Tensor totals = torch::zeros({3}, torch::kDouble);
    model->train();
    for (std::int64_t begin = 0; begin < shard.size(0); begin += options.batch_size) {
      torch::Tensor batch = shard.slice(0, begin, begin + options.batch_size);
      torch::Tensor x = train.features.index_select(0, batch);
      torch::Tensor y = train.labels.index_select(0, batch);
      optimizer.zero_grad();
      torch::Tensor logits = model->forward(x);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
      loss.backward();
      AverageGradients(cluster, model);
      optimizer.step();
      const double n = static_cast<double>(batch.size(0));
      totals[0] += loss.item<double>() * n;
      totals[1] += logits.argmax(1).eq(y).sum().item<double>();
      totals[2] += n;
    }
    cluster.AllReduce(totals);
    EpochStats stats;
    stats.loss = totals[0].item<double>() / totals[2].item<double>();
    stats.train_accuracy = totals[1].item<double>() / totals[2].item<double>();
    stats.test_accuracy = TestAccuracy();
    return stats;
  }

  // Each rank scores its share of the held-out set; the counts are summed over ranks.
  double TestAccuracy() {
    torch::NoGradGuard no_grad;
    model->eval();
    auto mine =
        EvalShardIndices(options.test_samples, cluster.env().world_size, cluster.env().rank);
    torch::Tensor counts = torch::zeros({2}, torch::kDouble);
    if (!mine.empty()) {
      torch::Tensor index = torch::tensor(mine, torch::kLong);
      torch::Tensor predicted = model->forward(test.features.index_select(0, index)).argmax(1);
      counts[0] = predicted.eq(test.labels.index_select(0, index)).sum().item<double>();
      counts[1] = static_cast<double>(mine.size());
    }
    cluster.AllReduce(counts);
    return counts[0].item<double>() / counts[1].item<double>();
  }

  // Every rank compares its parameters with every other rank's: the element-wise maximum and
  // minimum over ranks are equal only if all replicas hold bit-identical values.
  bool ReplicasMatch() {
    torch::NoGradGuard no_grad;
    auto params = model->parameters();
    if (options.diverge_rank == cluster.env().rank) params[0].add_(1e-3);
    torch::Tensor mine = Flatten(params);
    torch::Tensor high = mine.clone();
    torch::Tensor low = mine.clone();
    cluster.AllReduce(high, c10d::ReduceOp::MAX);
    cluster.AllReduce(low, c10d::ReduceOp::MIN);
    const double spread = (high - low).abs().max().item<double>();
    const double checksum = mine.to(torch::kDouble).sum().item<double>();
    if (spread == 0) {
      if (cluster.leader()) {
        Say("replica check: OK, all %d replicas hold identical parameters (%lld values, "
            "checksum %.9g)",
            cluster.env().world_size, static_cast<long long>(mine.numel()), checksum);
      }
      return true;
    }
    std::fprintf(stderr,
                 "replica check: FAILED on rank %d, replicas differ by up to %g "
                 "(this rank's checksum %.9g)\n",
                 cluster.env().rank, spread, checksum);
    return false;
  }
};

void HoldForTest(const Cluster& cluster, int epoch, std::chrono::seconds timeout) {
  Say("rank %d (pid %d): holding after epoch %d until killed (--hold-at-epoch)", cluster.env().rank,
      static_cast<int>(::getpid()), epoch);
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Say("rank %d: nobody killed me within %lld s, continuing", cluster.env().rank,
      static_cast<long long>(timeout.count()));
}

std::int64_t CountParameters(torch::nn::Sequential& model) {
  std::int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  return count;
}

void PrintBanner(const Cluster& cluster, const TrainerOptions& options, std::int64_t parameters) {
  const LaunchEnv& env = cluster.env();
  const std::int64_t per_rank = (options.train_samples + env.world_size - 1) / env.world_size;
  Say("trainer: %d workers meet in the %s store at %s:%u (attempt %d)", env.world_size,
      env.use_agent_store ? "launcher's" : "rank-0 worker's", env.master_addr.c_str(),
      static_cast<unsigned>(env.master_port), env.restart_count);
  Say("trainer: two-cluster classification (10 features, best possible accuracy about 94.5%%), "
      "%lld train / %lld test samples; MLP 10-%lld-%lld-2 (%lld parameters); SGD lr %g momentum "
      "%g; %lld samples per worker per step, %lld steps per epoch",
      static_cast<long long>(options.train_samples), static_cast<long long>(options.test_samples),
      static_cast<long long>(options.hidden), static_cast<long long>(options.hidden),
      static_cast<long long>(parameters), options.learning_rate, options.momentum,
      static_cast<long long>(options.batch_size),
      static_cast<long long>((per_rank + options.batch_size - 1) / options.batch_size));
}

int Train(const TrainerOptions& options, const LaunchEnv& env) {
  const auto start = Clock::now();
  Cluster cluster(env, options.timeout);
  const torch::Tensor centre = MakeCentre(options.seed);
  torch::manual_seed(options.seed);
  auto model = MakeModel(options.hidden);
  Trainer trainer{cluster,
                  options,
                  MakeTwoClusters(centre, options.train_samples, options.seed + 1),
                  MakeTwoClusters(centre, options.test_samples, options.seed + 2),
                  model,
                  torch::optim::SGD(
                      model->parameters(),
                      torch::optim::SGDOptions(options.learning_rate).momentum(options.momentum))};
  if (cluster.leader()) PrintBanner(cluster, options, CountParameters(model));

  const int completed = Resume(cluster, options, model, trainer.optimizer);
  BroadcastParameters(cluster, model);
  if (cluster.leader() && completed > 0) {
    Say("resumed from checkpoint %s after epoch %d; continuing at epoch %d",
        options.checkpoint.c_str(), completed, completed + 1);
  }

  double test_accuracy = completed > 0 ? trainer.TestAccuracy() : 0;
  for (int epoch = completed + 1; epoch <= options.epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    const EpochStats stats = trainer.RunEpoch(epoch);
    test_accuracy = stats.test_accuracy;
    const bool save = cluster.leader() && !options.checkpoint.empty();
    if (save) SaveCheckpoint(options.checkpoint, epoch, model, trainer.optimizer);
    if (cluster.leader()) {
      Say("epoch %3d/%d  loss %.4f  train acc %5.1f%%  test acc %5.1f%%  %.2f s%s", epoch,
          options.epochs, stats.loss, 100 * stats.train_accuracy, 100 * stats.test_accuracy,
          SecondsSince(epoch_start), save ? "  (checkpoint saved)" : "");
    }
    if (options.hold_at_epoch == epoch && env.restart_count == 0) {
      HoldForTest(cluster, epoch, options.timeout);
    }
  }
  if (cluster.leader()) {
    Say("done: %d epochs, final test accuracy %.1f%%, %.2f s in this attempt", options.epochs,
        100 * test_accuracy, SecondsSince(start));
  }
  return trainer.ReplicasMatch() ? 0 : kReplicaMismatchExitCode;
}

}  // namespace
}  // namespace cpplaunch::example

int main(int argc, char** argv) {
  namespace ex = cpplaunch::example;
  int rank = -1;
  try {
    const ex::TrainerOptions options = ex::ParseTrainerOptions({argv + 1, argv + argc});
    if (options.help) {
      std::fputs(ex::TrainerUsage().c_str(), stdout);
      return 0;
    }
    const ex::LaunchEnv env =
        ex::ParseLaunchEnv([](const char* name) { return std::getenv(name); });
    rank = env.rank;
    return ex::Train(options, env);
  } catch (const ex::UsageError& e) {
    std::fprintf(stderr, "trainer: %s\n", e.what());
    return ex::kUsageExitCode;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "trainer: rank %d: %s\n", rank, e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainer: rank %d: %s\n", rank, e.what());
    return 1;
  }
}
